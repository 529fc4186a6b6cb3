import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import {
  AGENT_CHECK_DEADLINE_MS,
  AGENT_CHECK_PROMPT,
  type AgentCheck,
  type AgentCheckStep,
} from '../../../src-shared/agent-check.js';
import type { Logger } from '../../clock.js';
import { notFound } from '../../errors.js';
import type { Repos } from '../../store/storage.js';
import { installCommand, locateExecutable, type Located } from '../executables.js';
import { acpAgent, type AcpAgentSpec } from '../kinds/acp/acp-agents.js';
import { CLI_KIND_SPECS } from '../kinds/cli-kinds.js';
import { isCliKind } from '../kinds/cli-kind-names.js';
import { cliHomePath } from '../kinds/cli/cli-homes.js';
import { acpAgentVersion, locateAgentProgram, locateProgram, programVersion } from '../kinds/cli/programs.js';
import { signInOf } from '../kinds/needs/sign-in.js';
import { agentEnvironment } from '../sandbox/environment.js';
import { NetworkProxies, type ProxyLease } from '../sandbox/network-proxy.js';
import { hostAndPort } from '../sandbox/reach.js';
import { detectOsSandbox } from '../sandbox/os-sandbox.js';
import { checkSandboxRoot, defaultSandboxRoot, secureSessionFolder } from '../sandbox/sandbox-root.js';
import { sandboxPath } from '../sandbox/session-folder.js';
import { RunAborted, type AgentRunner, type RunContext } from '../types.js';
import {
  modelReach,
  neededBy,
  noSignInText,
  reachFix,
  unreachableText,
  type NeededBy,
} from './agent-failures.js';
import { agentConfigFromEnv, type AgentConfig } from './config.js';
import { watchModel, type GaveUp, type ModelWatch, type WatchTimes } from './model-watch.js';
import { enforcedHosts, limitNetwork, type NetworkDeps } from './run-network.js';
import { AgentSetupError, NO_RUN_STORES, WorkspaceAgents } from './workspace-agents.js';

/**
 * The agent check: the workspace's agent run as a session would run it, step by step, within
 * AGENT_CHECK_DEADLINE_MS. Its program found (and its version asked in the sandbox), the
 * sign-in its session's home will get, and one tiny prompt in a sandbox of its own through the
 * workspace's network, with the model watch (model-watch.ts) at a check's pace. Nothing of it
 * is kept: its folder and home are removed, and no session records it.
 */

export interface CheckDeps extends NetworkDeps {
  workspaces: Pick<Repos['workspaces'], 'settings' | 'findById'>;
  dataDir: string;
  sandboxRoot: string;
  config: AgentConfig;
  logger: Logger;
}

/**
 * A check's pace: tries at 4, 7 and 10 s, so that a model API out of reach is said about 10 s
 * after the agent started, well within the check's 30 s.
 */
const CHECK_WATCH: WatchTimes = { firstMs: 4_000, everyMs: 3_000, giveUpMs: 10_000 };

/**
 * What the prompt leaves of the deadline for stopping the agent: an ACP agent gets 2 s to
 * cancel, then SIGTERM ends its processes (a program that ignores it is killed later, after the
 * check has answered: the answer goes at the deadline whatever). OpenCode takes about 15 s to
 * answer its first prompt in a fresh home, so the prompt gets what is left of 25 s.
 */
const STOP_MARGIN_MS = 5_000;

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Text that ends as a sentence does, so that another can follow it. */
const sentence = (text: string) => (/[.!?:…)"]$/u.test(text) ? text : `${text}.`);

/** Text cut to `max` characters on a word boundary, whitespace collapsed. */
function cut(text: string, max: number): string {
  const flat = text.replace(/\s+/gu, ' ').trim();
  if (flat.length <= max) return flat;
  const at = flat.lastIndexOf(' ', max);
  return `${flat.slice(0, at > max / 2 ? at : max)}…`;
}

/** The workspace's agent, checked. */
export async function checkAgent(
  deps: CheckDeps,
  workspaceId: string,
  deadlineMs = AGENT_CHECK_DEADLINE_MS,
): Promise<AgentCheck> {
  const started = Date.now();
  if (!(await deps.workspaces.findById(workspaceId))) throw notFound(`There is no workspace ${workspaceId}.`);
  const agents = new WorkspaceAgents({
    stores: NO_RUN_STORES,
    workspaces: deps.workspaces,
    dataDir: deps.dataDir,
    config: deps.config,
    osSandbox: deps.osSandbox,
    agentEnvironment: deps.agentEnvironment,
  });
  const { settings } = await agents.settingsFor(workspaceId);
  if (settings.agent === 'demo') {
    return {
      ok: true,
      agent: 'Demo agent (simulated)',
      steps: [
        {
          name: 'simulated',
          ok: true,
          detail:
            'The demo agent is simulated: it runs no program and calls no model, so there is nothing to check. Its sessions are made up; choose a real agent for real work.',
        },
      ],
    };
  }
  let runner: AgentRunner;
  try {
    runner = await agents.runnerFor(workspaceId);
  } catch (err) {
    if (!(err instanceof AgentSetupError)) throw err;
    return { ok: false, agent: 'The agent', steps: [{ name: 'program', ok: false, detail: err.message }] };
  }
  const spec = runner.acpAgent === undefined ? undefined : acpAgent(runner.acpAgent, deps.dataDir);
  const command =
    settings.agent === 'command'
      ? settings.commandName === undefined
        ? deps.config.defaultCommand
        : agents.namedCommands()[settings.commandName]
      : undefined;
  const agent: NeededBy =
    settings.agent === 'command'
      ? { name: settings.commandName ? `The command "${settings.commandName}"` : 'The agent command' }
      : neededBy(runner.kind, spec);

  const env = deps.agentEnvironment();
  const program = await programStep(deps, runner, spec, command, agent);
  const signIn =
    agent.family === undefined
      ? undefined
      : await signInOf(agent.family, { agent: env, server: deps.lookupEnv });
  const credentials: AgentCheckStep =
    signIn === undefined
      ? {
          name: 'credentials',
          ok: true,
          detail: `Session Desk does not know where ${agent.name} keeps its sign-in: the test prompt tells whether it has one.`,
        }
      : signIn.found.length > 0
        ? {
            name: 'credentials',
            ok: true,
            detail: `A session's home and environment get: ${signIn.found.join('; ')}.`,
          }
        : { name: 'credentials', ok: false, detail: noSignInText(agent, signIn), fix: signIn.fix };
  const prompt: AgentCheckStep = program.ok
    ? await promptStep(deps, workspaceId, runner, agent, settings.allowedHosts, started + deadlineMs)
    : { name: 'prompt', ok: false, detail: `Not run: ${agent.name}'s program is missing.` };
  // An agent that answered has a sign-in, wherever it keeps it.
  if (prompt.ok && !credentials.ok) {
    credentials.ok = true;
    credentials.detail = `Found none of the credentials Session Desk knows for ${agent.name}, but it answered all the same: it signs in some other way.`;
    delete credentials.fix;
  }
  const steps = [program, credentials, prompt];
  return { ok: steps.every((step) => step.ok), agent: agent.name, steps };
}

/** The program found, as a run finds it (never in Session Desk's own folders), and its version. */
async function programStep(
  deps: CheckDeps,
  runner: AgentRunner,
  spec: AcpAgentSpec | undefined,
  command: string[] | undefined,
  agent: NeededBy,
): Promise<AgentCheckStep> {
  const ownFolders = [deps.dataDir, deps.sandboxRoot];
  const confine = { sandbox: deps.osSandbox(), hidden: ownFolders };
  const env = deps.agentEnvironment();
  let located: Located;
  let npm: string | undefined;
  let envVar: string | undefined;
  if (isCliKind(runner.kind)) {
    located = locateProgram(runner.kind, deps.lookupEnv, ownFolders);
    ({ npm, envVar } = CLI_KIND_SPECS[runner.kind]);
  } else if (spec) {
    located = locateAgentProgram(spec, deps.lookupEnv, ownFolders);
    ({ npm, envVar } = spec);
  } else {
    const [first] = command ?? [];
    if (first === undefined) return { name: 'program', ok: false, detail: `${agent.name} names no program.` };
    located = locateExecutable({ name: agent.name, program: first, envVar: 'PATH' }, env);
  }
  if (!located.found) {
    const fix = npm
      ? `Install it with \`${installCommand(npm)}\`${envVar ? `, or set ${envVar} to its path` : ''}.`
      : envVar
        ? `Install it, or set ${envVar} to its path.`
        : 'Install it, or ask the administrator to define the command with its full path.';
    return { name: 'program', ok: false, detail: located.problem.replaceAll('`', ''), fix };
  }
  const version = isCliKind(runner.kind)
    ? await programVersion(located.path, env, confine)
    : spec
      ? await acpAgentVersion(spec, located.path, env, confine)
      : undefined;
  return {
    name: 'program',
    ok: true,
    detail: `${located.path}${version ? `, version ${version}` : ''}${confine.sandbox.isolation === 'sandbox' ? '' : ' (agents here run without an operating-system sandbox)'}.`,
  };
}

/** One prompt run as a session's would be, in a folder and home of its own, by the deadline. */
async function promptStep(
  deps: CheckDeps,
  workspaceId: string,
  runner: AgentRunner,
  agent: NeededBy,
  allowedHosts: readonly string[] | undefined,
  deadline: number,
): Promise<AgentCheckStep> {
  const id = `agent-check-${randomBytes(6).toString('hex')}`;
  const sandboxDir = sandboxPath(deps.sandboxRoot, id);
  const cliHome = cliHomePath(deps.sandboxRoot, id);
  const env = deps.agentEnvironment();
  const enforced = enforcedHosts(deps, allowedHosts);
  const stop = new AbortController();
  const texts: string[] = [];
  const refused = new Set<string>();
  let gaveUp: GaveUp | undefined;
  let watch: ModelWatch | undefined;
  let proxy: ProxyLease | undefined;
  const startedAt = Date.now();
  const rules = { writable: [sandboxDir, cliHome], readable: [], hidden: [deps.dataDir, deps.sandboxRoot] };
  const ctx: RunContext = {
    session: { id, workspaceId, title: 'Agent check', model: '', baseBranch: 'main' },
    sandboxDir,
    ownedFolder: sandboxDir,
    cliHome,
    signal: stop.signal,
    confinement: { sandbox: deps.osSandbox(), rules },
    sink: {
      assistant: (message) => {
        if (message.notice !== undefined) return Promise.resolve();
        watch?.answered();
        for (const block of message.message.content) if (block.type === 'text') texts.push(block.text);
        return Promise.resolve();
      },
      tasks: () => Promise.resolve(),
      branch: () => Promise.resolve(),
    },
    processStarted: () => watch?.started(),
  };
  // A sandboxes folder made for the check alone (a command run where no server ran) goes with it.
  const rootMade = !existsSync(deps.sandboxRoot);
  const running = (async () => {
    secureSessionFolder(deps.sandboxRoot, deps.dataDir, id, deps.logger);
    proxy = await limitNetwork(deps, allowedHosts, rules, (host, port) => refused.add(`${host}:${port}`));
    watch = await watchModel({
      family: agent.family,
      env,
      allowedHosts: enforced,
      times: CHECK_WATCH,
      giveUp: (why) => {
        gaveUp = why;
        stop.abort();
      },
    });
    return runner.start(ctx, AGENT_CHECK_PROMPT);
  })().finally(async () => {
    watch?.stop();
    await proxy?.close();
    await Promise.all([sandboxDir, cliHome].map((dir) => rm(dir, { recursive: true, force: true })));
    if (rootMade) await rm(deps.sandboxRoot, { recursive: true, force: true });
  });
  const promptDeadline = deadline - STOP_MARGIN_MS - Date.now();
  const timer = setTimeout(() => stop.abort(), Math.max(0, promptDeadline));
  // However the agent takes its stop, the check answers by its deadline; the cleanup goes on.
  const answered = await Promise.race([
    running.then(
      ({ result }) => ({ result }),
      (err: unknown) => ({ err }),
    ),
    new Promise<{ late: true }>((resolve) =>
      setTimeout(() => resolve({ late: true }), Math.max(0, deadline - 1000 - Date.now())).unref(),
    ),
  ]);
  clearTimeout(timer);
  const took = Date.now() - startedAt;
  // What the allow-list refused besides the model API (which the step names already).
  const api = gaveUp && hostAndPort(gaveUp.endpoint.url);
  if (api) refused.delete(`${api.host}:${api.port}`);
  const refusedNote =
    refused.size > 0 ? ` The workspace's network allow-list refused: ${[...refused].join(', ')}.` : '';
  if ('result' in answered && !answered.result.is_error && !stop.signal.aborted) {
    const said = cut(answered.result.result || texts.join(' '), 120);
    return {
      name: 'prompt',
      ok: true,
      detail: said
        ? `${agent.name} answered in ${seconds(took)}: "${said}"`
        : `${agent.name} finished in ${seconds(took)} without an answer.`,
    };
  }
  if (gaveUp) {
    return {
      name: 'prompt',
      ok: false,
      detail: `${agent.name} had no answer from its model after ${seconds(gaveUp.afterMs)}. ${unreachableText(agent, gaveUp.endpoint, gaveUp.reached)}${refusedNote}`,
      endpoint: gaveUp.endpoint.url,
      fix: reachFix(gaveUp.endpoint, gaveUp.reached),
    };
  }
  const model = await modelReach(agent, env, enforced);
  // The runners' own failures already begin with the agent's name ("OpenCode failed: …").
  const failed = (text: string) => (text.startsWith(agent.name) ? text : `${agent.name} failed: ${text}`);
  const what = sentence(
    'result' in answered
      ? failed(cut(answered.result.result, 600))
      : 'err' in answered && !(answered.err instanceof RunAborted)
        ? failed(answered.err instanceof Error ? answered.err.message : String(answered.err))
        : `${agent.name} gave no answer within ${seconds(took)}`,
  );
  if (model && !model.reached.reachable) {
    return {
      name: 'prompt',
      ok: false,
      detail: `${what} ${unreachableText(agent, model.endpoint, model.reached)}${refusedNote}`,
      endpoint: model.endpoint.url,
      fix: reachFix(model.endpoint, model.reached),
    };
  }
  const reachable = model
    ? ` Its model API at ${model.endpoint.url} (${model.endpoint.source}) accepts connections.`
    : '';
  // What else the allow-list refused may be what the agent waited for (OpenCode fetches its
  // provider's package from the npm registry at its first start in a fresh home).
  const fix =
    refused.size > 0
      ? `If ${agent.name} needs ${[...refused].join(', ')}, add ${refused.size === 1 ? 'it' : 'them'} to this workspace's network allow-list: Settings › Agent › Network.`
      : undefined;
  return {
    name: 'prompt',
    ok: false,
    detail: `${what}${reachable}${refusedNote}`,
    ...(model ? { endpoint: model.endpoint.url } : {}),
    ...(fix ? { fix } : {}),
  };
}

/**
 * A check outside a running server (`sessiondesk agent check` on a data directory no server
 * holds, or on a team database): with this process's environment, as `serve` started from it
 * would run agents, and the sandboxes folder it would use.
 */
export function checkAgentHere(options: {
  workspaces: CheckDeps['workspaces'];
  dataDir: string;
  env: NodeJS.ProcessEnv;
  logger: Logger;
}): (workspaceId: string) => Promise<AgentCheck> {
  const { dataDir, env, logger } = options;
  const config = agentConfigFromEnv(env);
  const sandboxRoot = checkSandboxRoot(config.sandboxRoot ?? defaultSandboxRoot(dataDir), dataDir);
  const sandbox = detectOsSandbox(env);
  const agentEnv = agentEnvironment(env, config.agentEnvNames ?? []);
  const deps: CheckDeps = {
    workspaces: options.workspaces,
    dataDir,
    sandboxRoot,
    config,
    logger,
    osSandbox: () => sandbox,
    agentEnvironment: () => agentEnv,
    lookupEnv: env,
    proxies: new NetworkProxies(() => [dataDir, sandboxRoot]),
  };
  return (workspaceId) => checkAgent(deps, workspaceId);
}
