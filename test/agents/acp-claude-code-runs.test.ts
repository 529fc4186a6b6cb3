import { describeAcpAgentRuns } from '../helpers/acp-runs.js';

/** claude-code driven through the Agent Client Protocol by the real server, in the real sandbox. */
describeAcpAgentRuns('claude-code');
