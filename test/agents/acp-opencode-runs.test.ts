import { describeAcpAgentRuns } from '../helpers/acp-runs.js';

/** opencode driven through the Agent Client Protocol by the real server, in the real sandbox. */
describeAcpAgentRuns('opencode');
