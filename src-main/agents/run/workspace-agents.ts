import { modelsFor } from '../../../src-shared/agent-models.js';
import type { AgentSettings } from '../../../src-shared/accounts.js';
import type { Usage } from '../../../src-shared/sessions.js';
import type { SessionService } from '../../sessions/service.js';
import type { Repos } from '../../store/storage.js';
import { createAcpAgent } from '../kinds/acp/acp-agent.js';
import { acpAgent, knownAcpAgents, type AcpAgentSpec } from '../kinds/acp/acp-agents.js';
import { createAcpRunStore } from '../kinds/acp/acp-run-store.js';
import { createCliAgent, type CliRunStore } from '../kinds/cli/cli-agent.js';
import { CLI_KIND_SPECS } from '../kinds/cli-kinds.js';
import { isCliKind, type CliKind } from '../kinds/cli-kind-names.js';
import { createCliRunStore } from '../kinds/cli/cli-run-store.js';
import { createCommandAgent, DEFAULT_AGENT_TIMEOUT_MS } from '../kinds/command/command-agent.js';
import { createDemoAgent } from '../kinds/demo/demo-agent.js';
import type { AgentConfig } from './config.js';
import { readNamedCommands } from '../kinds/command/named-commands.js';
import type { OsSandbox } from '../types.js';
import type { AgentRunner } from '../types.js';

/** The agent a workspace runs, and where that comes from. */
export interface AgentInForce {
  settings: AgentSettings;
  source: 'workspace' | 'environment' | 'default';
}

/**
 * The agent a workspace runs: its own setting, else the command SESSIONDESK_AGENT_COMMAND names
 * (`defaultCommand`), else the demo.
 */
export function agentInForce(own: AgentSettings | null, defaultCommand: string[] | undefined): AgentInForce {
  if (own) return { settings: own, source: 'workspace' };
  if (defaultCommand)
    return { settings: { agent: 'command', command: defaultCommand }, source: 'environment' };
  return { settings: { agent: 'demo' }, source: 'default' };
}

/** The workspace's agent cannot run as set (the session fails with this message). */
export class AgentSetupError extends Error {}

/** Where a run keeps what outlasts it: the conversation to resume, and its usage. */
export interface RunStores {
  cli(kind: CliKind): CliRunStore;
  acp(spec: AcpAgentSpec): CliRunStore;
  demoUsage(sessionId: string, usage: Usage): Promise<void>;
}

/** A session's runs keep it on the session, through the session service. */
export function sessionRunStores(service: SessionService, repos: Repos): RunStores {
  return {
    cli: (kind) => createCliRunStore(kind, service, repos),
    acp: (spec) => createAcpRunStore(spec, service, repos),
    demoUsage: (sessionId, usage) => service.recordRun(sessionId, { kind: 'demo', usage }),
  };
}

/** A run that belongs to no session (an agent check) keeps nothing. */
const KEPT_NOWHERE: CliRunStore = {
  previous: () => Promise.resolve({}),
  conversation: () => Promise.resolve(),
  finished: () => Promise.resolve(),
};
export const NO_RUN_STORES: RunStores = {
  cli: () => KEPT_NOWHERE,
  acp: () => KEPT_NOWHERE,
  demoUsage: () => Promise.resolve(),
};

/**
 * Which agent each workspace uses, and the runner that runs it: the workspace's own setting,
 * else the environment's command, else the demo; with the commands the administrator defined
 * and what this machine can hold them in.
 */
export class WorkspaceAgents {
  constructor(
    private readonly deps: {
      stores: RunStores;
      workspaces: Pick<Repos['workspaces'], 'settings'>;
      dataDir: string;
      config: AgentConfig;
      osSandbox: () => OsSandbox;
      agentEnvironment: () => NodeJS.ProcessEnv;
    },
  ) {}

  /** The commands the administrator defined, by name (read afresh: the CLI may change them). */
  namedCommands(): Record<string, string[]> {
    return readNamedCommands(this.deps.dataDir);
  }

  /** Every ACP agent this installation can run, the administrator's included (read afresh). */
  acpAgents(): AcpAgentSpec[] {
    return knownAcpAgents(this.deps.dataDir);
  }

  /**
   * The agent a workspace uses: its own setting, else the environment's command, else the
   * demo; with the commands the administrator defined, to choose from.
   */
  async settingsFor(workspaceId: string): Promise<{
    settings: AgentSettings;
    source: 'workspace' | 'environment' | 'default';
    commands: { name: string; command: string[] }[];
    networkEnforced: boolean;
    networkProblem?: string;
    sandbox: { isolation: 'sandbox' | 'none'; detail: string };
  }> {
    const commands = Object.entries(this.namedCommands()).map(([name, command]) => ({ name, command }));
    // Only a sandbox can take a run's network away: without one, an allow-list is not enforced.
    const sandbox = this.deps.osSandbox();
    const network =
      sandbox.isolation === 'sandbox'
        ? {
            networkEnforced: true,
            sandbox: {
              isolation: 'sandbox' as const,
              detail: `Each run goes in a sandbox of its own (${sandbox.bwrap}): it sees the session's folder and its CLI's own state, not your other files or Session Desk's data, and nothing it starts outlives it.`,
            },
          }
        : {
            networkEnforced: false,
            networkProblem: `Agents here run without an operating-system sandbox, so a list of allowed hosts cannot be enforced: their programs reach any host. ${sandbox.reason}`,
            sandbox: { isolation: 'none' as const, detail: sandbox.reason },
          };
    const own = await this.deps.workspaces.settings(workspaceId);
    return { ...agentInForce(own, this.deps.config.defaultCommand), commands, ...network };
  }

  /**
   * The model a new session of the workspace gets when the person chose none: the
   * specification's default for the demo, else none, so that the agent's own default applies.
   * Read from the workspace's setting and the environment (no file read per create).
   */
  async defaultModel(workspaceId: string): Promise<string> {
    const own = await this.deps.workspaces.settings(workspaceId);
    const kind = own?.agent ?? (this.deps.config.defaultCommand ? 'command' : 'demo');
    return modelsFor(kind).defaultModel;
  }

  /** Throws AgentSetupError, saying why, when the workspace's agent cannot run. */
  async runnerFor(workspaceId: string): Promise<AgentRunner> {
    const own = await this.deps.workspaces.settings(workspaceId);
    const timeoutMs = own?.timeoutMs ?? DEFAULT_AGENT_TIMEOUT_MS;
    if (own && isCliKind(own.agent)) {
      return createCliAgent({
        spec: CLI_KIND_SPECS[own.agent],
        env: this.deps.agentEnvironment(),
        lookupEnv: this.deps.config.env ?? process.env,
        timeoutMs,
        runs: this.deps.stores.cli(own.agent),
      });
    }
    if (own?.agent === 'acp') {
      const spec = own.acpAgent === undefined ? undefined : acpAgent(own.acpAgent, this.deps.dataDir);
      if (!spec) {
        throw new AgentSetupError(
          `This workspace's ACP agent${own.acpAgent ? ` "${own.acpAgent}"` : ''} is not one Session Desk knows; choose another in Settings, then Agent.`,
        );
      }
      return createAcpAgent({
        spec,
        env: this.deps.agentEnvironment(),
        lookupEnv: this.deps.config.env ?? process.env,
        timeoutMs,
        runs: this.deps.stores.acp(spec),
      });
    }
    if (own?.agent === 'command') {
      if (own.commandName === undefined) {
        throw new AgentSetupError(
          "This workspace's agent is a program the workspace chose itself. Only the administrator " +
            'defines agent commands (sessiondesk agent-command set NAME -- program args…); choose one ' +
            'of theirs in Settings, then Agent.',
        );
      }
      const command = this.namedCommands()[own.commandName];
      if (!command) {
        throw new AgentSetupError(
          `The agent command "${own.commandName}" is no longer defined; ask the administrator, or choose another in Settings, then Agent.`,
        );
      }
      return createCommandAgent({ command, timeoutMs, environment: this.deps.agentEnvironment() });
    }
    if (!own && this.deps.config.defaultCommand) {
      return createCommandAgent({
        command: this.deps.config.defaultCommand,
        timeoutMs,
        environment: this.deps.agentEnvironment(),
      });
    }
    return createDemoAgent({
      paceMs: this.deps.config.demoPaceMs,
      environment: this.deps.agentEnvironment(),
      usage: (sessionId, usage) => this.deps.stores.demoUsage(sessionId, usage),
      ...(this.deps.config.demoSeed === undefined ? {} : { seed: this.deps.config.demoSeed }),
    });
  }
}
