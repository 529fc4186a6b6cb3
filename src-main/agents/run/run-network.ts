import { installRoot, locateExecutable } from '../executables.js';
import { BRIDGE_PORT } from '../sandbox/network-bridge.js';
import type { NetworkProxies, ProxyLease, Refused } from '../sandbox/network-proxy.js';
import type { Confinement, OsSandbox } from '../types.js';
import { AgentSetupError } from './workspace-agents.js';

/** What a run's network needs of the agent host. */
export interface NetworkDeps {
  /** The operating-system sandbox agents' programs run in, or why there is none. */
  osSandbox: () => OsSandbox;
  /** The allow-listed environment agents run with. */
  agentEnvironment: () => NodeJS.ProcessEnv;
  /** The environment agent CLIs are found in: the server's own unless configured. */
  lookupEnv: NodeJS.ProcessEnv;
  /** The proxies of workspaces that list the hosts their agents may reach. */
  proxies: Pick<NetworkProxies, 'open'>;
}

/** The hosts a run may reach, where the workspace lists them and a sandbox holds the run to it. */
export function enforcedHosts(deps: Pick<NetworkDeps, 'osSandbox'>, allowed: readonly string[] | undefined) {
  return allowed && deps.osSandbox().isolation === 'sandbox' ? allowed : undefined;
}

/**
 * Where the workspace lists the hosts its agents may reach (and a sandbox can hold them to
 * it): the run's proxy, and the bridge that runs its program, in its confinement.
 */
export async function limitNetwork(
  deps: NetworkDeps,
  allowedHosts: readonly string[] | undefined,
  rules: Confinement,
  refused: Refused,
): Promise<ProxyLease | undefined> {
  const allowed = enforcedHosts(deps, allowedHosts);
  if (!allowed) return undefined;
  const node = locateExecutable(
    { name: 'Node.js', program: 'node', envVar: 'SESSIONDESK_NODE_BIN' },
    {
      ...deps.agentEnvironment(),
      SESSIONDESK_NODE_BIN: deps.lookupEnv.SESSIONDESK_NODE_BIN,
    },
  );
  if (!node.found) {
    throw new AgentSetupError(
      `This workspace lists the hosts its agents may reach, which needs Node.js in their sandbox: ${node.problem}`,
    );
  }
  const lease = await deps.proxies.open(allowed, refused);
  rules.readable.push(installRoot(node.path, deps.agentEnvironment().HOME));
  rules.network = { socket: lease.socket, port: BRIDGE_PORT, node: node.path };
  return lease;
}
