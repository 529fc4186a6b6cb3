/** A desktop's data directory holding sessions, as `sessiondesk push` reads it. */
import { Readable } from 'node:stream';
import { expect } from 'vitest';
import { createAccounts } from '../../src-main/accounts/accounts.js';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import { importSessions } from '../../src-main/data/import.js';
import { readLines } from '../../src-main/data/lines.js';
import { storageOf } from '../../src-main/store/sqljs-storage.js';
import { Store } from '../../src-main/store/store.js';
import type { Message } from '../../src-shared/sessions.js';
import { PASSWORD } from './server.js';

export const EMAIL = 'ada@desktop.test';
export const id = (n: number) => `ses_pushed${String(n).padStart(16, '0')}`;

export interface LocalSession {
  id: string;
  messages: Message[];
  status?: 'active' | 'completed';
  /** When it was made (2026-01-05T10:00:00.000Z unless said): a desktop's clock may be wrong. */
  at?: string;
}

export const prompt = (text: string): Message => ({ type: 'user', message: { content: text } });
export const answer = (text: string): Message => ({
  type: 'assistant',
  message: { content: [{ type: 'text', text }] },
});

/** The sessions as an export (version 1: a whole session a line), as a desktop would hold them. */
export function exportText(organizationId: string, sessions: LocalSession[]): string {
  const exportedAt = '2026-01-05T10:00:00.000Z';
  const header = {
    type: 'sessiondesk.export',
    version: 1,
    organizationId,
    workspace: { name: 'Desk' },
    exportedAt,
  };
  const lines = sessions.map((s) => {
    const at = s.at ?? exportedAt;
    return JSON.stringify({
      type: 'session',
      id: s.id,
      title: `Session ${s.id.slice(-2)}`,
      status: s.status ?? 'completed',
      createdAt: at,
      updatedAt: new Date(Date.parse(at) + s.messages.length * 1000).toISOString(),
      model: 'claude-opus-4-6',
      author: { id: 'usr_x', name: 'Ada Desk', email: EMAIL },
      metadata: {},
      baseBranch: 'main',
      tasks: [],
      messages: s.messages,
      messageMeta: s.messages.map((m) => ({
        createdAt: at,
        ...(m.type === 'user' ? { authorEmail: EMAIL } : {}),
      })),
    });
  });
  return [JSON.stringify(header), ...lines].join('\n') + '\n';
}

/** Adds (or grows) sessions in a desktop's data directory, opened directly. */
export async function putLocal(
  dataDir: string,
  organizationId: string,
  sessions: LocalSession[],
): Promise<void> {
  const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
  try {
    const report = await importSessions(
      readLines(Readable.from([exportText(organizationId, sessions)])),
      organizationId,
      { storage: storageOf(store) },
    );
    expect(report.skippedCount, JSON.stringify(report.skipped)).toBe(0);
  } finally {
    await store.close({ snapshot: false });
  }
}

/** A desktop's data directory: its person, one workspace, these sessions. */
export async function desktopDataDir(
  dataDir: string,
  sessions: LocalSession[],
): Promise<{ dataDir: string; organizationId: string }> {
  const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
  let organizationId: string;
  try {
    const accounts = createAccounts(storageOf(store), systemClock);
    await accounts.createUser({ email: EMAIL, name: 'Ada Desk', password: PASSWORD });
    ({ organizationId } = await accounts.createWorkspace({ name: 'Desk', ownerEmail: EMAIL }));
  } finally {
    await store.close({ snapshot: false });
  }
  await putLocal(dataDir, organizationId, sessions);
  return { dataDir, organizationId };
}
