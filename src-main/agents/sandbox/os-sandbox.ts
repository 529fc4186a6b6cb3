import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { basename, delimiter, dirname, isAbsolute, join } from 'node:path';
import { isInside, realOf } from '../folders.js';
import type { Confinement, OsSandbox } from '../types.js';
import { bridged } from './network-bridge.js';
import { locateExecutable } from '../executables.js';

/**
 * The operating-system sandbox each agent run goes in. On Linux that is bubblewrap (`bwrap`),
 * the same tool Claude Code's own sandbox mode uses there: a PID namespace of the run's own
 * (when the run's first process ends, the kernel ends everything it started, tools that made
 * process sessions of their own included), a private /tmp, the user's home replaced by an
 * empty one, the data directory and the other sessions' sandboxes not there at all, and writes
 * only in the session's folder and the session's own home for its CLIs (see cli-homes.ts).
 */

/** Where the system keeps its programs and libraries: read-only in the sandbox. */
const SYSTEM_DIRS = ['/usr', '/etc', '/opt', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/nix'];

/**
 * Finds bubblewrap and checks that it can make the namespaces a run needs here (a kernel or
 * container without unprivileged user namespaces refuses): the answer is kept for the process.
 * `SESSIONDESK_OS_SANDBOX=off` turns the sandbox off (the runs then say so).
 */
export function detectOsSandbox(env: NodeJS.ProcessEnv): OsSandbox {
  if (env.SESSIONDESK_OS_SANDBOX === 'off') {
    return {
      isolation: 'none',
      reason: 'The operating-system sandbox is turned off (SESSIONDESK_OS_SANDBOX=off).',
    };
  }
  if (process.platform !== 'linux') {
    return {
      isolation: 'none',
      reason: `No operating-system sandbox is available on ${process.platform} yet; agents run as your user.`,
    };
  }
  const located = locateExecutable(
    { name: 'bubblewrap', program: 'bwrap', envVar: 'SESSIONDESK_BWRAP_BIN' },
    env,
  );
  if (!located.found) {
    return {
      isolation: 'none',
      reason:
        'bubblewrap (`bwrap`) is not installed, so agents run without a sandbox: install it (Debian and Ubuntu: `apt install bubblewrap`).',
    };
  }
  const probe = spawnSync(
    located.path,
    ['--die-with-parent', '--unshare-pid', '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', 'true'],
    { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000 },
  );
  if (probe.status !== 0) {
    const said = probe.stderr.toString().trim().split('\n').slice(-1)[0] ?? '';
    return {
      isolation: 'none',
      reason: `bubblewrap is installed but cannot make a sandbox here${said ? ` (${said})` : ''}; agents run without one.`,
    };
  }
  const bwrap = located.path;
  return {
    isolation: 'sandbox',
    bwrap,
    wrap: (program, args, confinement, runEnv, cwd) => ({
      program: bwrap,
      args: [
        ...bwrapArguments(confinement, runEnv, cwd),
        '--',
        ...(confinement.network ? bridged(confinement.network, program, args) : [program, ...args]),
      ],
    }),
  };
}

/** Binds `path` at the same place: a symlink is made again as a symlink, not followed. */
function bindArgs(kind: '--ro-bind' | '--bind', path: string): string[] {
  let link: string | undefined;
  try {
    if (lstatSync(path).isSymbolicLink()) link = readlinkSync(path);
  } catch {
    return [];
  }
  if (link !== undefined && dirname(path) === '/') return ['--symlink', link, path];
  return [kind, path, path];
}

/**
 * The folders of PATH a program may need, outside the system's own. A `…/bin` folder outside the
 * home brings its parent (a Node.js install keeps `npm` in `../lib`); inside the home only the
 * folder itself is bound (`~/.cargo/bin`, never `~/.cargo` with its credentials), with the
 * `lib` beside it when it holds `node` (a Node.js install of the person's, as nvm makes).
 */
function pathFolders(env: NodeJS.ProcessEnv): string[] {
  const home = env.HOME ? realOf(env.HOME) : undefined;
  const folders: string[] = [];
  for (const entry of (env.PATH ?? '').split(delimiter)) {
    if (!isAbsolute(entry) || !existsSync(entry)) continue;
    const dir = realOf(entry);
    if (SYSTEM_DIRS.some((system) => isInside(dir, system))) continue;
    // The home itself, or a folder holding it, is never bound whole.
    if (home !== undefined && isInside(home, dir)) continue;
    const parent = dirname(dir);
    if (basename(dir) !== 'bin' || parent === '/') folders.push(dir);
    else if (home === undefined || !isInside(parent, home)) folders.push(parent);
    else {
      folders.push(dir);
      if (existsSync(join(dir, 'node')) && existsSync(join(parent, 'lib'))) folders.push(join(parent, 'lib'));
    }
  }
  return folders;
}

/** bubblewrap's command line for one run, up to the `--` before the program. */
export function bwrapArguments(confinement: Confinement, env: NodeJS.ProcessEnv, cwd: string): string[] {
  const args = [
    // Nothing outlives the run: the kernel ends the namespace with its first process, and
    // bubblewrap with the server.
    '--die-with-parent',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    // No network but the sandbox's own loopback: the allowed hosts are reached by the proxy.
    ...(confinement.network ? ['--unshare-net'] : []),
  ];
  for (const dir of SYSTEM_DIRS) if (existsSync(dir)) args.push(...bindArgs('--ro-bind', dir));
  // Name resolution where /etc/resolv.conf points elsewhere (systemd-resolved keeps it in /run).
  try {
    const resolvConf = realpathSync('/etc/resolv.conf');
    if (!isInside(resolvConf, '/etc')) args.push('--ro-bind', dirname(resolvConf), dirname(resolvConf));
  } catch {
    /* no resolver configuration: nothing to bind */
  }
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--dir', '/var/tmp', '--dir', '/run');
  // The user's TMPDIR (a folder of their own, or one inside the host's /tmp) does not exist in
  // here: temporary files go in the run's private /tmp.
  if (env.TMPDIR !== undefined) args.push('--setenv', 'TMPDIR', '/tmp');
  const home = env.HOME && isAbsolute(env.HOME) ? env.HOME : undefined;
  if (home) args.push('--tmpfs', home);
  // The user's git identity and settings (read-only): a sandbox is a clone, and the agent commits.
  const gitFiles = [
    env.GIT_CONFIG_GLOBAL,
    home && join(home, '.gitconfig'),
    join(env.XDG_CONFIG_HOME ?? (home ? join(home, '.config') : '/nonexistent'), 'git'),
  ];
  const readable = [...pathFolders(env), ...confinement.readable, ...gitFiles];
  for (const path of readable) {
    if (path && isAbsolute(path) && existsSync(path) && path !== '/')
      args.push(...bindArgs('--ro-bind', path));
  }
  if (env.SSH_AUTH_SOCK && existsSync(env.SSH_AUTH_SOCK))
    args.push('--bind', env.SSH_AUTH_SOCK, env.SSH_AUTH_SOCK);
  // Hidden after everything readable, so that nothing bound above shows them; then the writable
  // folders (the session's own is inside the hidden sandboxes folder); then hidden again what a
  // writable folder holds (a person's folder a continuation works in may hold the data directory).
  const hide = (path: string) =>
    statSync(path).isDirectory() ? ['--tmpfs', path] : ['--ro-bind', '/dev/null', path];
  const hidden = confinement.hidden.filter((path) => existsSync(path));
  for (const path of hidden) args.push(...hide(path));
  for (const path of confinement.writable) args.push('--bind', path, path);
  for (const { from, to } of confinement.files ?? []) args.push('--bind', from, to);
  for (const path of hidden) {
    if (confinement.writable.some((dir) => isInside(path, dir) && path !== dir)) args.push(...hide(path));
  }
  if (confinement.network) args.push('--bind', confinement.network.socket, confinement.network.socket);
  args.push('--chdir', cwd);
  return args;
}
