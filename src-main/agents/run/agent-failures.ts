import type { AgentKind } from '../../../src-shared/constants.js';
import { acpAgentLabel, type AcpAgentSpec } from '../kinds/acp/acp-agents.js';
import { CLI_KIND_SPECS } from '../kinds/cli-kinds.js';
import { isCliKind } from '../kinds/cli-kind-names.js';
import { modelEndpointOf, type ModelEndpoint } from '../kinds/needs/model-endpoint.js';
import { familyOf, type AgentFamily, type NeedsEnv } from '../kinds/needs/person-config.js';
import { signInOf, type SignIn } from '../kinds/needs/sign-in.js';
import { hostAndPort, reach, type Reach } from '../sandbox/reach.js';
import type { GaveUp } from './model-watch.js';

/**
 * Why an agent's run fails, in words a person can act on: no sign-in where its session's home
 * gets one, or a model API the run cannot reach (with the URL it tried and what to change). The
 * agent check says the same, step by step, before any session runs.
 */

/** An agent as its needs are looked up: its name, and whose sign-in and model it has. */
export interface NeededBy {
  name: string;
  family?: AgentFamily | undefined;
}

/** An agent by the kind a run names (and its ACP agent's spec). */
export function neededBy(kind: AgentKind, spec?: AcpAgentSpec): NeededBy {
  if (isCliKind(kind)) return { name: CLI_KIND_SPECS[kind].name, family: kind };
  if (kind === 'acp' && spec) return { name: acpAgentLabel(spec), family: familyOf(kind, spec) };
  if (kind === 'command') return { name: 'The agent command' };
  return { name: 'The demo agent' };
}

/** What to do about a model API the run cannot reach. */
export function reachFix(endpoint: ModelEndpoint, reached: Extract<Reach, { reachable: false }>): string {
  const target = hostAndPort(endpoint.url);
  const host = target ? `${target.host}:${target.port}` : endpoint.url;
  if (reached.notAllowed)
    return `Add ${target?.host ?? endpoint.url} (or ${host}) to this workspace's network allow-list: Settings › Agent › Network.`;
  return `Check the model API's address (${endpoint.source}) and that this machine reaches ${host}.`;
}

/** A model API the run could not reach, in a sentence: where, from what setting, and why not. */
export function unreachableText(
  agent: NeededBy,
  endpoint: ModelEndpoint,
  reached: Extract<Reach, { reachable: false }>,
): string {
  return `${agent.name} cannot reach its model API at ${endpoint.url} (${endpoint.source}): ${reached.reason}.`;
}

/** A run the watch ended (model-watch.ts): how long it waited, the API it tried, what to do. */
export function gaveUpText(agent: NeededBy, gaveUp: GaveUp): string {
  const seconds = Math.round(gaveUp.afterMs / 1000);
  return (
    `${agent.name} had no answer from its model after ${seconds} s. ${unreachableText(agent, gaveUp.endpoint, gaveUp.reached)} ` +
    `Session Desk ended the run rather than wait on ${agent.name}'s own retries. ${reachFix(gaveUp.endpoint, gaveUp.reached)}`
  );
}

/** No sign-in found, in a sentence (what to add is the sign-in's `fix`). */
export function noSignInText(agent: NeededBy, signIn: SignIn): string {
  const hidden =
    signIn.hidden.length === 0
      ? ''
      : ` ${signIn.hidden.join(', ')} ${signIn.hidden.length === 1 ? 'is' : 'are'} set where Session Desk runs, but its agents do not see ${signIn.hidden.length === 1 ? 'it' : 'them'}: name ${signIn.hidden.length === 1 ? 'it' : 'them'} in SESSIONDESK_AGENT_ENV.`;
  return `${agent.name} has no sign-in: none of its credentials is where a session's home gets them.${hidden}`;
}

/** One reason a run may fail: in a sentence, what to do, and the model API it concerns. */
export interface FailureCause {
  text: string;
  fix: string;
  endpoint?: string;
}

/** A sign-in that is missing, when it is (undefined where the agent's needs are unknown). */
export async function missingSignIn(agent: NeededBy, env: NeedsEnv): Promise<FailureCause | undefined> {
  if (agent.family === undefined) return undefined;
  const signIn = await signInOf(agent.family, env);
  return signIn.found.length > 0 ? undefined : { text: noSignInText(agent, signIn), fix: signIn.fix };
}

/** The model API the agent calls, and whether a run reaches it now (undefined where unknown). */
export async function modelReach(
  agent: NeededBy,
  env: NodeJS.ProcessEnv,
  allowedHosts: readonly string[] | undefined,
): Promise<{ endpoint: ModelEndpoint; reached: Reach } | undefined> {
  if (agent.family === undefined) return undefined;
  const endpoint = await modelEndpointOf(agent.family, env);
  return endpoint && { endpoint, reached: await reach(endpoint.url, { allowedHosts, env }) };
}

/** A model API out of reach, as a cause. */
export function unreachableCause(
  agent: NeededBy,
  endpoint: ModelEndpoint,
  reached: Extract<Reach, { reachable: false }>,
): FailureCause {
  return {
    text: unreachableText(agent, endpoint, reached),
    fix: reachFix(endpoint, reached),
    endpoint: endpoint.url,
  };
}

/**
 * Why a failed run of `agent` may have failed, for its result message: no sign-in, or its model
 * API out of reach now. Undefined when neither (or when Session Desk does not know its needs).
 */
export async function failureCauses(
  agent: NeededBy,
  env: NeedsEnv,
  allowedHosts: readonly string[] | undefined,
): Promise<string | undefined> {
  const causes: FailureCause[] = [];
  const signIn = await missingSignIn(agent, env);
  if (signIn) causes.push(signIn);
  const model = await modelReach(agent, env.agent, allowedHosts);
  if (model && !model.reached.reachable) causes.push(unreachableCause(agent, model.endpoint, model.reached));
  return causes.length > 0 ? causes.map((c) => `${c.text} ${c.fix}`).join('\n\n') : undefined;
}
