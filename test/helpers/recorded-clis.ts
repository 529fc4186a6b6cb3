import { chmodSync, cpSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const RECORDINGS = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'agents');

/** The program name each agent kind is run by. */
export const PROGRAMS = { 'claude-code': 'claude', codex: 'codex', gemini: 'gemini' } as const;

/**
 * Writes `claude`, `codex` and `gemini` into `dir`, each playing back that CLI's recordings
 * (test/fixtures/agents/recorded-cli.mjs); put `dir` first on PATH. Returns `dir`. The player
 * and its recordings are copied in beside them, so that `dir` holds the whole install, as a real
 * CLI's folder does: an agent's sandbox shows its program's folder and nothing else of ours.
 */
export function installRecordedClis(dir: string): string {
  const player = join(dir, 'recorded-player');
  cpSync(RECORDINGS, player, { recursive: true });
  const PLAYER = join(player, 'recorded-cli.mjs');
  for (const [kind, program] of Object.entries(PROGRAMS)) {
    const path = join(dir, program);
    writeFileSync(
      path,
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(PLAYER)} ${kind} "$@"\n`,
    );
    chmodSync(path, 0o755);
  }
  return dir;
}
