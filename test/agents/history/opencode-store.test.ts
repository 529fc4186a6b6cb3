// OpenCode's database read as a session file while OpenCode writes it: a message is handed over
// only once OpenCode is done with it, rows written one at a time as OpenCode writes them.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { readOpencodeSession } from '../../../src-main/history/opencode-store.js';
import { ROOT } from '../../helpers/cli.js';

const FIXTURE = join(ROOT, 'test', 'fixtures', 'history', 'opencode', '1.18.33', 'write-and-continue');
const CONVERSATION = 'ses_de5d26561ffeXPn7pSTpiya3hx';
const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function copyRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'opencode-store-'));
  roots.push(root);
  cpSync(FIXTURE, root, { recursive: true });
  return root;
}

/** The lines a read hands over (the session's row first), each parsed. */
async function linesOf(root: string, settled: boolean): Promise<Record<string, unknown>[]> {
  const chat = await readOpencodeSession(root, CONVERSATION, settled);
  const lines: Record<string, unknown>[] = [];
  for await (const batch of chat!.batches(0)) {
    for (const line of batch.lines) lines.push(JSON.parse(line) as Record<string, unknown>);
  }
  return lines;
}

const messageIds = (lines: Record<string, unknown>[]) =>
  lines.flatMap((line) => {
    const message = line.message as { id?: string } | undefined;
    return message?.id ? [message.id] : [];
  });

describe('an OpenCode session read while it is written', () => {
  it('waits for an ended step whose parts are not written yet, unless the session is settled', async () => {
    const root = copyRoot();
    const db = new DatabaseSync(join(root, 'opencode.db'), { timeout: 5000 });
    const at = Date.now();
    const before = messageIds(await linesOf(root, false));
    // The step's row comes first, already marked ended; its text part is a row of its own.
    db.prepare(
      'INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)',
    ).run(
      'msg_zzstep',
      CONVERSATION,
      at,
      at,
      JSON.stringify({ role: 'assistant', modelID: 'm', time: { created: at, completed: at } }),
    );
    expect(messageIds(await linesOf(root, false))).toEqual(before);
    expect(messageIds(await linesOf(root, true))).toEqual([...before, 'msg_zzstep']);

    db.prepare(
      'INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)',
    ).run('prt_zzstep', 'msg_zzstep', CONVERSATION, at, at, JSON.stringify({ type: 'text', text: 'ANSWER' }));
    const lines = await linesOf(root, false);
    expect(messageIds(lines)).toEqual([...before, 'msg_zzstep']);
    expect(JSON.stringify(lines.at(-1))).toContain('ANSWER');
    db.close();
  });

  it('hands over a step that failed before it wrote any part', async () => {
    const root = copyRoot();
    const db = new DatabaseSync(join(root, 'opencode.db'), { timeout: 5000 });
    const at = Date.now();
    db.prepare(
      'INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)',
    ).run(
      'msg_zzfailed',
      CONVERSATION,
      at,
      at,
      JSON.stringify({ role: 'assistant', error: { name: 'APIError' }, time: { created: at } }),
    );
    expect(messageIds(await linesOf(root, false)).at(-1)).toBe('msg_zzfailed');
    db.close();
  });
});
