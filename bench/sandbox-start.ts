import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliHomePath, prepareCliHome } from '../src-main/agents/kinds/cli/cli-homes.js';
import { CLI_KINDS } from '../src-main/agents/kinds/cli-kind-names.js';
import { detectOsSandbox } from '../src-main/agents/sandbox/os-sandbox.js';
import { runProcess } from '../src-main/agents/process/process-run.js';
import { percentile } from './load.js';

/**
 * `npm run bench:sandbox` (and the end of `npm run bench`): what the operating-system sandbox
 * costs a run. The same short program (`node -e 0`, the floor of every Node-based agent CLI)
 * is run through the product's runProcess, as a run starts its agent, alternately without a
 * sandbox and in bubblewrap with a run's whole confinement (the data directory and the
 * sandboxes folder hidden, the session's folder writable, a CLI state folder bound), so both
 * see the same machine. Medians, p95 and the difference go to bench/sandbox-results.json.
 * Target: the sandbox adds at most 50 ms to a run's start and end (a run takes seconds to
 * minutes).
 */

const ROUNDS = Number(process.env.SANDBOX_BENCH_ROUNDS ?? 40);
const TARGET_MS = 50;

const root = mkdtempSync(join(tmpdir(), 'sessiondesk-sandbox-bench-'));
const dataDir = join(root, 'data');
const sandboxRoot = join(root, 'data-sandboxes');
const sessionDir = join(sandboxRoot, 'ses_bench');
const home = join(root, 'home');
const cliHome = cliHomePath(sandboxRoot, 'ses_bench');

async function main(): Promise<void> {
  for (const dir of [
    dataDir,
    sessionDir,
    cliHome,
    join(home, '.claude'),
    join(home, '.codex'),
    join(home, '.gemini'),
  ])
    mkdirSync(dir, { recursive: true });
  // A signed-in person's folders: what each run's CLI home is seeded from.
  writeFileSync(join(home, '.claude', '.credentials.json'), '{"claudeAiOauth":{"accessToken":"token"}}');
  writeFileSync(join(home, '.claude.json'), JSON.stringify({ primaryApiKey: 'key', projects: {} }));
  writeFileSync(join(home, '.codex', 'auth.json'), '{"OPENAI_API_KEY":"key"}');
  writeFileSync(join(home, '.codex', 'config.toml'), 'model = "gpt-5.5"\n[mcp_servers.x]\ncommand = "x"\n');
  writeFileSync(
    join(home, '.gemini', 'settings.json'),
    '{"security":{"auth":{"selectedType":"oauth-personal"}}}',
  );
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home };
  const sandbox = detectOsSandbox(process.env);
  if (sandbox.isolation !== 'sandbox') {
    console.log(`No sandbox on this machine, nothing to compare: ${sandbox.reason}`);
    return;
  }
  const confine = {
    sandbox,
    rules: {
      writable: [sessionDir, cliHome],
      readable: [],
      hidden: [dataDir, sandboxRoot],
    },
  };
  const once = async (sandboxed: boolean, withHome = false): Promise<number> => {
    const started = process.hrtime.bigint();
    if (withHome) await prepareCliHome(cliHome, CLI_KINDS, env);
    const run = runProcess({
      program: process.execPath,
      args: ['-e', '0'],
      cwd: sessionDir,
      env,
      stdin: '',
      timeoutMs: 30_000,
      signal: new AbortController().signal,
      ...(sandboxed ? { confine } : { ownedFolder: sessionDir }),
    });
    run.stdout.resume();
    const exit = await run.ended;
    if (exit.code !== 0)
      throw new Error(`the program failed (${sandboxed ? 'sandboxed' : 'plain'}): ${exit.stderrTail}`);
    return Number(process.hrtime.bigint() - started) / 1e6;
  };
  const plain: number[] = [];
  const boxed: number[] = [];
  const homed: number[] = [];
  await once(false);
  await once(true);
  await once(true, true);
  for (let i = 0; i < ROUNDS; i += 1) {
    plain.push(await once(false));
    boxed.push(await once(true));
    homed.push(await once(true, true));
  }
  plain.sort((a, b) => a - b);
  boxed.sort((a, b) => a - b);
  homed.sort((a, b) => a - b);
  const summary = (values: number[]) => ({
    p50: Math.round(percentile(values, 50) * 10) / 10,
    p95: Math.round(percentile(values, 95) * 10) / 10,
  });
  const result = {
    at: new Date().toISOString(),
    rounds: ROUNDS,
    program: 'node -e 0',
    plainMs: summary(plain),
    sandboxedMs: summary(boxed),
    addedMsP50: Math.round((percentile(boxed, 50) - percentile(plain, 50)) * 10) / 10,
    withCliHomeMs: summary(homed),
    cliHomeAddedMsP50: Math.round((percentile(homed, 50) - percentile(boxed, 50)) * 10) / 10,
    targetAddedMs: TARGET_MS,
  };
  const met = result.addedMsP50 <= TARGET_MS;
  console.log(
    `Run start and end of \`node -e 0\` (${ROUNDS} rounds, alternating): plain p50 ${result.plainMs.p50} ms ` +
      `(p95 ${result.plainMs.p95}), in bubblewrap p50 ${result.sandboxedMs.p50} ms (p95 ${result.sandboxedMs.p95}): ` +
      `+${result.addedMsP50} ms, target ≤ ${TARGET_MS} ms: ${met ? 'PASS' : 'MISS'}; ` +
      `preparing the session's CLI home adds ${result.cliHomeAddedMsP50} ms more (p50 ${result.withCliHomeMs.p50} ms)`,
  );
  writeFileSync(join(import.meta.dirname, 'sandbox-results.json'), `${JSON.stringify(result, null, 2)}\n`);
}

try {
  await main();
} finally {
  rmSync(root, { recursive: true, force: true });
}
