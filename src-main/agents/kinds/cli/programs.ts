import { spawn } from 'node:child_process';
import type { AgentKindInfo } from '../../../../src-shared/accounts.js';
import { CLI_KIND_SPECS } from '../cli-kinds.js';
import { CLI_KINDS, type CliKind } from '../cli-kind-names.js';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  folderHolding,
  installCommand,
  installRoot,
  locateExecutable,
  type Located,
  type ProgramSpec,
} from '../../executables.js';
import { ACP_AGENTS, acpAgentLabel, type AcpAgentSpec } from '../acp/acp-agents.js';
import type { OsSandbox } from '../../types.js';

/**
 * Finds a CLI kind's program (see locateExecutable). One that lies, as named or once its links
 * are followed, in a folder agents write (`agentFolders`: the sandboxes, with the sessions' CLI
 * homes) or in Session Desk's data is refused: a run could have replaced it, and the server runs
 * it outside any sandbox to ask its version, and starts every later run with it.
 */
export function locateProgram(
  kind: CliKind,
  env: NodeJS.ProcessEnv,
  agentFolders: readonly string[] = [],
): Located {
  return locateAgentProgram(CLI_KIND_SPECS[kind], env, agentFolders);
}

/** Any agent's program (a CLI kind's, an ACP agent's), refused where an agent could write it. */
export function locateAgentProgram(
  spec: ProgramSpec,
  env: NodeJS.ProcessEnv,
  agentFolders: readonly string[] = [],
): Located {
  const located = locateExecutable(spec, env);
  if (!located.found) return located;
  const folder = folderHolding(located.path, agentFolders);
  if (folder === undefined) return located;
  return {
    found: false,
    problem: `${spec.name}'s program ${located.path} lies in ${folder}, where agents write or Session Desk keeps its data: Session Desk never runs a program an agent could have replaced. Install it elsewhere, or set ${spec.envVar} to another copy.`,
  };
}

/** The version in an npm package's `package.json` under `nodeModules`, if it is there. */
function npmPackageVersion(nodeModules: string, name: string): string | undefined {
  try {
    const manifest = JSON.parse(readFileSync(join(nodeModules, name, 'package.json'), 'utf8')) as {
      version?: unknown;
    };
    return typeof manifest.version === 'string' ? manifest.version : undefined;
  } catch {
    return undefined;
  }
}

const VERSION_TIMEOUT_MS = 10_000;
const VERSION_PATTERN = /\d+\.\d+(?:\.\d+)?(?:[-+][\w.]+)?/u;

/**
 * Versions already asked, by path, with the file they came from: a Node CLI takes a second or
 * more to print its version, and Settings asks for all three on every visit. An update of the
 * program (another file, size or time) asks again.
 */
const versions = new Map<string, { stamp: string; version: Promise<string | undefined> }>();

function fileStamp(path: string): string | undefined {
  try {
    const stat = statSync(path);
    return `${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`;
  } catch {
    return undefined;
  }
}

/** Where a program's `--version` is asked: in the agents' sandbox, with Session Desk's folders hidden. */
export interface VersionSandbox {
  sandbox: OsSandbox;
  hidden: string[];
}

/** The version a program prints for `--version`, asked once per version of the file. */
export function programVersion(
  path: string,
  env: NodeJS.ProcessEnv,
  confine?: VersionSandbox,
): Promise<string | undefined> {
  const stamp = fileStamp(path);
  if (stamp === undefined) return Promise.resolve(undefined);
  const known = versions.get(path);
  if (known?.stamp === stamp) return known.version;
  const version = askVersion(path, env, confine).then((found) => {
    // A program that could not answer (busy machine, timeout) is asked again next time.
    if (found === undefined && versions.get(path)?.version === version) versions.delete(path);
    return found;
  });
  versions.set(path, { stamp, version });
  return version;
}

/**
 * Runs `program --version` (a Node CLI can take a few seconds) and reads the version, or
 * undefined. In the operating-system sandbox where there is one, as a run would: it writes
 * nothing that lasts and sees neither the data directory nor the person's files.
 */
function askVersion(
  path: string,
  env: NodeJS.ProcessEnv,
  confine?: VersionSandbox,
): Promise<string | undefined> {
  const wrapped =
    confine?.sandbox.isolation === 'sandbox'
      ? confine.sandbox.wrap(
          path,
          ['--version'],
          { writable: [], readable: [installRoot(path, env.HOME)], hidden: confine.hidden },
          env,
          '/tmp',
        )
      : { program: path, args: ['--version'] };
  return new Promise((resolve) => {
    let output = '';
    const child = spawn(wrapped.program, wrapped.args, {
      env,
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: VERSION_TIMEOUT_MS,
    });
    child.stdout.on('data', (d: Buffer) => {
      if (output.length < 4096) output += d.toString();
    });
    child.on('error', () => resolve(undefined));
    child.on('close', (code) => resolve(code === 0 ? VERSION_PATTERN.exec(output)?.[0] : undefined));
  });
}

/** An ACP agent's version, where it can be read (its `--version`, or its npm package's). */
export async function acpAgentVersion(
  spec: AcpAgentSpec,
  path: string,
  env: NodeJS.ProcessEnv,
  confine?: VersionSandbox,
): Promise<string | undefined> {
  if (spec.version === 'npm' && spec.npm) return npmPackageVersion(installRoot(path, env.HOME), spec.npm);
  return spec.version === 'flag' ? programVersion(path, env, confine) : undefined;
}

/** The npm package an agent installs from, and the command that installs it. */
function installFacts(npm: string | undefined): Pick<AgentKindInfo, 'npm' | 'install'> {
  return npm === undefined ? {} : { npm, install: installCommand(npm) };
}

/**
 * Every agent kind as this server sees it, for the Settings page: `agentFolders` as for
 * locateProgram, the version asked in `confine`.
 */
export async function describeAgentKinds(
  env: NodeJS.ProcessEnv,
  acpAgents: readonly AcpAgentSpec[] = ACP_AGENTS,
  confine?: VersionSandbox & { agentFolders: string[] },
): Promise<AgentKindInfo[]> {
  const cli = await Promise.all(
    CLI_KINDS.map(async (kind): Promise<AgentKindInfo> => {
      const spec = CLI_KIND_SPECS[kind];
      const located = locateProgram(kind, env, confine?.agentFolders);
      const info: AgentKindInfo = {
        kind,
        name: spec.name,
        simulated: false,
        program: spec.program,
        envVar: spec.envVar,
        found: located.found,
        ...installFacts(spec.npm),
      };
      if (!located.found) return { ...info, problem: located.problem };
      const version = await programVersion(located.path, env, confine);
      return { ...info, path: located.path, ...(version ? { version } : {}) };
    }),
  );
  const acp = await Promise.all(
    acpAgents.map(async (spec): Promise<AgentKindInfo> => {
      const located = locateAgentProgram(spec, env, confine?.agentFolders);
      const info: AgentKindInfo = {
        kind: 'acp',
        acpAgent: spec.id,
        name: acpAgentLabel(spec),
        simulated: false,
        program: spec.program,
        envVar: spec.envVar,
        found: located.found,
        tested: spec.tested,
        ...installFacts(spec.npm),
      };
      if (!located.found) return { ...info, problem: located.problem };
      const version = await acpAgentVersion(spec, located.path, env, confine);
      return { ...info, path: located.path, ...(version ? { version } : {}) };
    }),
  );
  return [
    { kind: 'demo', name: 'Demo agent (simulated)', simulated: true, found: true },
    { kind: 'command', name: 'Custom command', simulated: false, found: true },
    ...cli,
    ...acp,
  ];
}
