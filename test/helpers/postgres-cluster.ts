import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './cli.js';

/**
 * A throw-away PostgreSQL cluster, made and removed by scripts/postgres-cluster.sh (the one
 * place that knows how: the tests, the benches and a person trying the team server share it).
 * Plain Node, no test runner: the benches use it too.
 */
const SCRIPT = join(ROOT, 'scripts', 'postgres-cluster.sh');
const run = promisify(execFile);

export interface PostgresCluster {
  dir: string;
  port: number;
  /** Makes a database of that name and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server and keeps its files, for `resume` (a server that goes away and returns). */
  halt(): Promise<void>;
  resume(): Promise<void>;
  /** Stops the server and removes its folder. */
  stop(): Promise<void>;
}

/** PostgreSQL's bin folder, or why there is none with how to install it. */
export function findPostgres(): { bin: string } | { missing: string } {
  const found = spawnSync('sh', [SCRIPT, 'check'], { encoding: 'utf8' });
  if (found.status === 0) return { bin: found.stdout.trim() };
  return { missing: found.stderr.trim().replace(/^postgres-cluster: /, '') || 'PostgreSQL not found' };
}

async function script(...args: string[]): Promise<string> {
  try {
    const { stdout } = await run('sh', [SCRIPT, ...args], { encoding: 'utf8' });
    return stdout.trim();
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr?.trim();
    throw new Error(`scripts/postgres-cluster.sh ${args[0]} failed: ${stderr || String(err)}`, {
      cause: err,
    });
  }
}

/**
 * Starts a cluster in a new temporary folder. The script picks a free port, which another
 * process may take before the server binds it: a start that fails is tried again in a new folder.
 */
export async function startCluster(): Promise<PostgresCluster> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const dir = mkdtempSync(join(tmpdir(), 'sessiondesk-pg-'));
    try {
      const url = await script('start', dir);
      return clusterAt(dir, Number(new URL(url).port));
    } catch (err) {
      lastError = err;
      await script('stop', dir).catch(() => rmSync(dir, { recursive: true, force: true }));
    }
  }
  throw lastError;
}

function clusterAt(dir: string, port: number): PostgresCluster {
  return {
    dir,
    port,
    createDatabase: (name) => script('createdb', dir, name),
    halt: async () => void (await script('stop', dir, '--keep')),
    resume: async () => void (await script('start', dir)),
    stop: async () => void (await script('stop', dir)),
  };
}
