import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runProgram } from '../sandbox/session-folder.js';

/** Where a sandbox's clone stands: on a branch, or at a commit with no branch (detached). */
export type SandboxHead = { branch: string } | { detachedAt: string };

/**
 * The branch the sandbox's clone is on, read from git itself (`git symbolic-ref`): an agent
 * may have switched to a branch of its own. Null when the sandbox holds no clone.
 */
export async function sandboxHead(dir: string, env: NodeJS.ProcessEnv): Promise<SandboxHead | null> {
  if (!existsSync(join(dir, '.git'))) return null;
  const ref = await runProgram('git', ['symbolic-ref', '--quiet', '--short', 'HEAD'], { cwd: dir, env });
  if (ref.code === 0 && ref.stdout.trim() !== '') return { branch: ref.stdout.trim() };
  // Exit code 1 with --quiet: HEAD is not a branch but a commit.
  if (ref.code !== 1) return null;
  const commit = await runProgram('git', ['rev-parse', '--short', 'HEAD'], { cwd: dir, env });
  return commit.code === 0 ? { detachedAt: commit.stdout.trim() } : null;
}
