import { describeAcpAgentRuns } from '../helpers/acp-runs.js';

/** qwen-code driven through the Agent Client Protocol by the real server, in the real sandbox. */
describeAcpAgentRuns('qwen-code');
