import { execFile, execFileSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeFlagsFor } from '../../bin/node-flags.js';
import { PROJECT_ROOT } from '../../src-main/paths.js';
import { skipWithReason } from '../helpers/require-tools.js';

const run = promisify(execFile);
let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A checkout of its own around the real launcher (bin/sessiondesk.js): a command line in the
 * sources and a build of it that say which of them ran.
 */
function checkout(): { root: string; write: (path: string, text: string, at: number) => void } {
  dir = mkdtempSync(join(tmpdir(), 'launcher-'));
  const write = (path: string, text: string, at: number) => {
    const file = join(dir, path);
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, text);
    utimesSync(file, at, at);
  };
  mkdirSync(join(dir, 'bin'));
  copyFileSync(join(PROJECT_ROOT, 'bin', 'sessiondesk.js'), join(dir, 'bin', 'sessiondesk.js'));
  copyFileSync(join(PROJECT_ROOT, 'bin', 'node-flags.js'), join(dir, 'bin', 'node-flags.js'));
  symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(dir, 'node_modules'));
  write('package.json', '{ "type": "module" }', 1000);
  write('src-shared/constants.ts', 'export const ran: string = "source";\n', 1000);
  write(
    'src-main/cli/main.ts',
    'import { ran } from "../../src-shared/constants.ts";\nconsole.log(ran, process.argv.slice(2).join(" "));\n',
    1000,
  );
  return { root: dir, write };
}

async function launch(root: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  const { stdout } = await run(process.execPath, [join(root, 'bin', 'sessiondesk.js'), 'serve', '--x'], {
    env: { ...process.env, ...env },
  });
  return stdout.trim();
}

describe('the sessiondesk launcher', () => {
  it('runs the build while it is newer than every source, and the sources otherwise', async () => {
    const { root, write } = checkout();
    // No build yet: the TypeScript sources run.
    expect(await launch(root)).toBe('source serve --x');

    write('out/cli/sessiondesk.mjs', 'console.log("build", process.argv.slice(2).join(" "));\n', 2000);
    expect(await launch(root)).toBe('build serve --x');
    // Asked for, the sources run anyway.
    expect(await launch(root, { SESSIONDESK_FROM_SOURCE: '1' })).toBe('source serve --x');

    // An edit anywhere in the sources after the build (here a nested shared file) wins.
    write('src-shared/constants.ts', 'export const ran: string = "edited source";\n', 3000);
    expect(await launch(root)).toBe('edited source serve --x');
    write('src-shared/constants.ts', 'export const ran: string = "source";\n', 1000);
    write('package.json', '{ "type": "module", "version": "2" }', 3000);
    expect(await launch(root)).toBe('source serve --x');
  });

  it('starts serve, history and import again in the same process with the V8 flags and the allocator setting, and no other command', async () => {
    const { root, write } = checkout();
    write(
      'src-main/cli/main.ts',
      'console.log(JSON.stringify({ pid: process.pid, flags: process.execArgv, args: process.argv.slice(2), mmap: process.env.MALLOC_MMAP_THRESHOLD_ ?? null }));\n',
      1000,
    );
    const launched = async (...args: string[]) => {
      const env = { ...process.env };
      delete env.MALLOC_MMAP_THRESHOLD_;
      const running = run(process.execPath, [join(root, 'bin', 'sessiondesk.js'), ...args], { env });
      const { stdout } = await running;
      return {
        spawned: running.child.pid,
        ...(JSON.parse(stdout) as { pid: number; flags: string[]; args: string[]; mmap: string | null }),
      };
    };
    for (const [command, semiSpace] of [
      ['serve', 8],
      ['history', 16],
      ['import', 16],
    ] as const) {
      const ran = await launched(command, '--data-dir', 'x');
      expect(ran.flags).toEqual(expect.arrayContaining([...nodeFlagsFor(command)]));
      expect(ran.flags).toContain(`--max-semi-space-size=${semiSpace}`);
      // glibc's mmap threshold fixed at its default (node-flags.js).
      expect(ran.mmap).toBe('131072');
      expect(ran.args).toEqual([command, '--data-dir', 'x']);
      // The same process: a signal sent to the pid that was started reaches the command.
      expect(ran.pid).toBe(ran.spawned);
    }
    expect(nodeFlagsFor('user')).toEqual([]);
    const short = await launched('user', 'list');
    expect(short.flags.join(' ')).not.toContain('--max-semi-space-size');
    expect(short.mmap).toBeNull();
  });
});

/** A Node older than the floor, where the machine has one (Debian's `/usr/bin/node` may be 20). */
function olderNode(): string | null {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
    try {
      const version = execFileSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' });
      const [major = 0, minor = 0] = version.trim().split('.').map(Number);
      if (major < 22 || (major === 22 && minor < 13)) return candidate;
    } catch {
      // not there
    }
  }
  return null;
}

const older = olderNode();

describe('the launcher on a Node older than 22.13', () => {
  it(
    `says which Node it needs and exits 1${older ? ` (tried with ${older})` : ''}`,
    skipWithReason(older ? null : 'this machine has no Node older than 22.13 to try the launcher with'),
    async () => {
      const { root } = checkout();
      const failure = await run(older!, [join(root, 'bin', 'sessiondesk.js'), '--version']).then(
        () => null,
        (error: { code: number; stderr: string; stdout: string }) => error,
      );
      expect(failure).not.toBeNull();
      expect(failure!.code).toBe(1);
      expect(failure!.stderr).toMatch(/needs Node\.js 22\.13 or later.*this is Node v\d+/);
      expect(failure!.stdout).toBe('');
    },
  );
});
