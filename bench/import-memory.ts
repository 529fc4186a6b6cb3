/**
 * The peak RSS of `sessiondesk import` (the real command, as its own
 * process, opening a data directory itself) reading one session of about 150 MB, the size
 * of the largest single sessions users report. The same session is imported from an export
 * in format version 2 (a line per message) and, for comparison, version 1 (the session on
 * one line). Prints one line per import and writes nothing else.
 *
 *   node ./bin/run-ts.js bench/import-memory.ts [--mb 150] [--versions 2,1]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createAccounts } from '../src-main/accounts/accounts.js';
import { silentLogger, systemClock } from '../src-main/clock.js';
import { Store } from '../src-main/store/store.js';
import { storageOf } from '../src-main/store/sqljs-storage.js';

const { values } = parseArgs({
  options: { mb: { type: 'string', default: '150' }, versions: { type: 'string', default: '2,1' } },
});
const targetBytes = Number(values.mb) * 1e6;
const versions = String(values.versions).split(',').map(Number);
const root = mkdtempSync(join(tmpdir(), 'sessiondesk-import-bench-'));
const EMAIL = 'ada@example.test';
const SESSION_ID = 'ses_importbench00000000000';
const T0 = Date.parse('2030-01-06T10:00:00.000Z');

/** Messages shaped like a coding agent's: prompts, text with tool calls, file contents. */
function message(i: number): { createdAt: string; message: unknown; authorEmail?: string } {
  const createdAt = new Date(T0 + i * 1000).toISOString();
  if (i % 50 === 0) {
    return {
      createdAt,
      authorEmail: EMAIL,
      message: { type: 'user', message: { content: `Step ${i}: go on.` } },
    };
  }
  // Mostly a few KB; every 40th a file read of about 200 KB, as agents read whole files.
  const size = i % 40 === 7 ? 200_000 : 2_000 + ((i * 7919) % 12_000);
  const text = `line ${i} of the file\n`.repeat(Math.ceil(size / 22)).slice(0, size);
  return {
    createdAt,
    message: {
      type: 'assistant',
      message: {
        content: [
          { type: 'text', text: `Reading part ${i}.` },
          { type: 'tool_use', id: `tu_${i}`, name: 'Read', input: { file_path: `src/file-${i}.ts` } },
          { type: 'text', text },
        ],
      },
    },
  };
}

const head = {
  type: 'session',
  id: SESSION_ID,
  title: 'A very long session',
  status: 'completed',
  createdAt: new Date(T0).toISOString(),
  updatedAt: new Date(T0 + 10_000_000).toISOString(),
  model: 'claude-opus-4-6',
  author: { id: 'usr_AAAAAAAAAAAAAAAAAAAAAA', name: 'Ada', email: EMAIL },
  metadata: {},
  baseBranch: 'main',
  tasks: [],
  runs: [],
};

async function writeExport(path: string, version: number): Promise<{ messages: number; bytes: number }> {
  const out = createWriteStream(path);
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  const header = {
    type: 'sessiondesk.export',
    version,
    organizationId: 'org_AAAAAAAAAAAAAAAAAAAAAA',
    workspace: { name: 'Bench' },
    exportedAt: new Date(T0 + 20_000_000).toISOString(),
    sessionCount: 1,
  };
  await write(`${JSON.stringify(header)}\n`);
  // The count first: the session line announces it.
  let count = 0;
  for (let total = 0; total < targetBytes; count += 1) total += JSON.stringify(message(count)).length + 20;
  if (version === 2) {
    await write(`${JSON.stringify({ ...head, messageCount: count })}\n`);
    for (let i = 0; i < count; i += 1) await write(`${JSON.stringify({ type: 'message', ...message(i) })}\n`);
    await write(`${JSON.stringify({ type: 'session-end', id: SESSION_ID, messageCount: count })}\n`);
    await write(`${JSON.stringify({ type: 'end', sessionCount: 1 })}\n`);
  } else {
    await write(`${JSON.stringify(head).slice(0, -1)},"messages":[`);
    for (let i = 0; i < count; i += 1)
      await write(`${i > 0 ? ',' : ''}${JSON.stringify(message(i).message)}`);
    await write('],"messageMeta":[');
    for (let i = 0; i < count; i += 1) {
      const { message: _m, ...meta } = message(i);
      await write(`${i > 0 ? ',' : ''}${JSON.stringify(meta)}`);
    }
    await write(']}\n');
  }
  out.end();
  await once(out, 'finish');
  return { messages: count, bytes: statSync(path).size };
}

async function freshDataDir(name: string): Promise<{ dataDir: string; organizationId: string }> {
  const dataDir = join(root, name);
  const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
  try {
    const accounts = createAccounts(storageOf(store), systemClock);
    await accounts.createUser({ email: EMAIL, name: 'Ada', password: 'correct horse battery staple' });
    const { organizationId } = await accounts.createWorkspace({ name: 'Bench', ownerEmail: EMAIL });
    return { dataDir, organizationId };
  } finally {
    await store.close();
  }
}

/** Runs the command and reads its peak RSS (VmHWM) until it exits. */
async function peakRssOf(args: string[]): Promise<{ peakMb: number; seconds: number; stdout: string }> {
  const started = performance.now();
  const child = spawn(process.execPath, ['./bin/sessiondesk.js', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let peakKb = 0;
  const sample = () => {
    try {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const hwm = /VmHWM:\s+(\d+) kB/u.exec(status);
      if (hwm) peakKb = Math.max(peakKb, Number(hwm[1]));
    } catch {
      // Exited between two samples: the last one read stands.
    }
  };
  const timer = setInterval(sample, 20);
  const [code] = (await once(child, 'exit')) as [number];
  clearInterval(timer);
  if (code !== 0) throw new Error(`sessiondesk ${args.join(' ')} exited ${code}: ${stderr}`);
  return { peakMb: peakKb / 1024, seconds: (performance.now() - started) / 1000, stdout };
}

try {
  for (const version of versions) {
    const file = join(root, `export-v${version}.ndjson`);
    const written = await writeExport(file, version);
    const { dataDir, organizationId } = await freshDataDir(`data-v${version}`);
    const run = await peakRssOf([
      'import',
      '--workspace',
      organizationId,
      '--input',
      file,
      '--data-dir',
      dataDir,
    ]);
    console.log(
      `format ${version}: one session of ${(written.bytes / 1e6).toFixed(1)} MB (${written.messages} messages): ` +
        `peak RSS ${run.peakMb.toFixed(0)} MB, ${run.seconds.toFixed(1)} s; ${run.stdout.split('\n')[0]}`,
    );
    rmSync(file, { force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
