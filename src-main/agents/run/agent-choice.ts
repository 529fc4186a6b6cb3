import type { AgentSettings } from '../../../src-shared/accounts.js';
import { badRequest } from '../../errors.js';
import type { Located } from '../executables.js';
import { knownAcpAgents, type AcpAgentSpec } from '../kinds/acp/acp-agents.js';
import { isCliKind, type CliKind } from '../kinds/cli-kind-names.js';
import { locateAgentProgram, locateProgram } from '../kinds/cli/programs.js';

/**
 * Whether a workspace may be given an agent here, checked alike wherever one is chosen (the
 * dashboard's Settings, first-run setup, `sessiondesk workspace create --agent`): an agent CLI
 * only where its program is installed, an ACP agent only one Session Desk knows and finds.
 */

/** Where agents' programs are found: the agent host of a server, or the command line's own look. */
export interface AgentFinder {
  locateProgram(kind: CliKind, env: NodeJS.ProcessEnv): Located;
  acpAgents(): AcpAgentSpec[];
  locateAcpAgent(spec: AcpAgentSpec, env: NodeJS.ProcessEnv): Located;
}

/**
 * The finder of a command run beside a data directory (no server holds it, or it is a team
 * server's): the programs as a server on it would find them, refused in its own folders.
 */
export function localAgentFinder(dataDir: string, sandboxRoot: string): AgentFinder {
  const own = [dataDir, sandboxRoot];
  return {
    locateProgram: (kind, env) => locateProgram(kind, env, own),
    acpAgents: () => knownAcpAgents(dataDir),
    locateAcpAgent: (spec, env) => locateAgentProgram(spec, env, own),
  };
}

/** Throws 400, saying why, unless `choice` can run here. */
export function checkAgentChoice(
  finder: AgentFinder,
  env: NodeJS.ProcessEnv,
  choice: { agent?: AgentSettings['agent'] | undefined; acpAgent?: string | undefined },
): void {
  const { agent, acpAgent: id } = choice;
  if (agent !== undefined && isCliKind(agent)) {
    const located = finder.locateProgram(agent, env);
    if (!located.found)
      throw badRequest(located.problem, [{ path: 'body.agent', message: 'is not installed on the server' }]);
  }
  if (agent !== 'acp') {
    if (id !== undefined) {
      throw badRequest('acpAgent goes with agent "acp"', [
        { path: 'body.acpAgent', message: 'is only for agent "acp"' },
      ]);
    }
    return;
  }
  if (id === undefined) {
    throw badRequest('Agent "acp" needs the ACP agent to run', [
      { path: 'body.acpAgent', message: 'is required for agent "acp" (see GET /api/agents)' },
    ]);
  }
  const known = finder.acpAgents();
  const spec = known.find((a) => a.id === id);
  if (!spec) {
    throw badRequest(`There is no ACP agent "${id}" here`, [
      { path: 'body.acpAgent', message: `is not one of ${known.map((a) => a.id).join(', ')}` },
    ]);
  }
  const located = finder.locateAcpAgent(spec, env);
  if (!located.found)
    throw badRequest(located.problem, [{ path: 'body.acpAgent', message: 'is not installed on the server' }]);
}
