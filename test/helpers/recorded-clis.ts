import { chmodSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PLAYER = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'agents', 'recorded-cli.mjs');

/** The program name each agent kind is run by. */
export const PROGRAMS = { 'claude-code': 'claude', codex: 'codex', gemini: 'gemini' } as const;

/**
 * Writes `claude`, `codex` and `gemini` into `dir`, each playing back that CLI's recordings
 * (test/fixtures/agents/recorded-cli.mjs); put `dir` first on PATH. Returns `dir`.
 */
export function installRecordedClis(dir: string): string {
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
