// Imported Gemini CLI chats over HTTP: what the CLI says to the model on its own is never a
// prompt the person typed, and its thinking reads (and is found) as the model streamed it.
import { cpSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SearchResponseSchema } from '../../src-shared/search.js';
import type { SessionFull } from '../../src-shared/sessions.js';
import { getSession } from '../helpers/agent-runs.js';
import { useCleanups } from '../helpers/cleanups.js';
import { ROOT } from '../helpers/cli.js';
import { followedSession } from '../helpers/imported.js';
import { seedWorkspace, startTestServer, tempDir, withKey } from '../helpers/server.js';
import { until } from '../helpers/until.js';

const cleanup = useCleanups();

/** A long time ago for a chat file: its chat ended. */
const LONG_AGO_MS = 24 * 60 * 60 * 1000;

/** A recorded Gemini CLI 0.61.0 scenario in a folder of its own, and its chat file there. */
function copyGeminiScenario(scenario: string): { root: string; file: string } {
  const root = tempDir('imported-gemini-');
  cleanup(() => rmSync(root, { recursive: true, force: true }));
  cpSync(join(ROOT, 'test', 'fixtures', 'history', 'gemini', '0.61.0', scenario), root, { recursive: true });
  const chats = join(root, 'tmp', 'repo', 'chats');
  const file = join(
    chats,
    readdirSync(chats).find((name) => name.endsWith('.jsonl'))!,
  );
  return { root, file };
}

function backdate(file: string): void {
  const at = new Date(Date.now() - LONG_AGO_MS);
  utimesSync(file, at, at);
}

/**
 * The chat at `root` imported by a server's follower, once `results` of its turns have ended:
 * a follower short of time reads a file over several scans, and a backdated file shows as ended
 * from its first one.
 */
async function imported(root: string, results: number) {
  const server = await startTestServer();
  cleanup(() => server.dispose());
  const owner = await seedWorkspace(server);
  const summary = await followedSession(server, owner, { kind: 'gemini', rootDir: root });
  const session = await until(
    () => getSession(server, owner.user.cookie, summary.id),
    (s) => s.status !== 'active' && s.messages.filter((m) => m.type === 'result').length >= results,
  );
  const search = async (q: string) =>
    SearchResponseSchema.parse(
      await (await withKey(server, owner.apiKey, 'GET', `/api/search?q=${encodeURIComponent(q)}`)).json(),
    );
  return { session, search };
}

const prompts = (session: SessionFull) =>
  session.messages.flatMap((m) => (m.type === 'user' ? [m.message.content] : []));

describe('an imported Gemini CLI chat', () => {
  it('keeps the context the CLI writes again on resuming out of the prompts', async () => {
    const { root, file } = copyGeminiScenario('resume');
    // Resuming a chat whose file it converts or rewrites (an older `session-*.json`, a file it
    // could not read back), the CLI writes messages out as records of their own: its context
    // among them, where the first run had it only in `$set.messages`.
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    const resumedAt = lines.findLastIndex((line) => line.startsWith('{"sessionId"'));
    const restatedAt = lines.findIndex((line, i) => i > resumedAt && line.includes('"messages":['));
    const [context] = (JSON.parse(lines[restatedAt]!) as { $set: { messages: unknown[] } }).$set.messages;
    expect(JSON.stringify(context)).toContain('<session_context>');
    lines.splice(restatedAt, 1, JSON.stringify(context));
    writeFileSync(file, lines.join('\n') + '\n');
    backdate(file);

    const { session } = await imported(root, 2);

    expect(prompts(session)).toEqual([
      'Remember that the colour is teal. RESUME-FIRST',
      'Which colour did I tell you?',
    ]);
    expect(session.messages.filter((m) => m.type === 'result')).toHaveLength(2);
    expect(JSON.stringify(session.messages)).not.toContain('<session_context>');
  });

  it("joins the thinking's streamed chunks as they came, so search finds its words", async () => {
    const { root, file } = copyGeminiScenario('plain-answer');
    backdate(file);
    const { session, search } = await imported(root, 1);

    const thinking = session.messages.flatMap((m) =>
      m.type === 'assistant'
        ? m.message.content.flatMap((b) => (b.type === 'thinking' ? [b.thinking] : []))
        : [],
    );
    expect(thinking).toEqual(['The user wants a greeting.']);
    const found = await until(
      () => search('wants'),
      (result) => result.hits.length > 0,
    );
    expect(found.hits[0]).toMatchObject({ sessionId: session.id });
    expect(found.hits[0]!.snippet).toContain('The user wants a greeting.');
  });
});
