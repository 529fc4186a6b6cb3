// Qwen Code's own chat files (recorded by Qwen Code 0.24.4, test/fixtures/history/qwen-code/)
// followed by a real server over HTTP: what the API shows of them, the agent they report, that
// lines appended while the server follows show, and that a follow-up is refused with a reason.
import { appendFileSync, cpSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ContinuationChoicesResponseSchema } from '../../src-shared/continuation.js';
import { ListSessionsResponseSchema, type SessionFull } from '../../src-shared/sessions.js';
import { getSession } from '../helpers/agent-runs.js';
import { useCleanups } from '../helpers/cleanups.js';
import { filesUnder, HISTORY_FIXTURES } from '../helpers/hostile-history.js';
import { followedSession } from '../helpers/imported.js';
import { asUser, seedWorkspace, startTestServer, tempDir, withKey } from '../helpers/server.js';
import { until } from '../helpers/until.js';

const cleanup = useCleanups();

/** A recorded scenario in a folder of its own, and its one chat file there. */
function copyQwenScenario(scenario: string): { root: string; file: string } {
  const root = tempDir('imported-qwen-');
  cleanup(() => rmSync(root, { recursive: true, force: true }));
  cpSync(join(HISTORY_FIXTURES, 'qwen-code', '0.24.4', scenario), root, { recursive: true });
  return { root, file: filesUnder(join(root, 'projects'), /\.jsonl$/u)[0]! };
}

/** The file written a day ago: its chat ended. */
function backdate(file: string): void {
  const at = new Date(Date.now() - 24 * 60 * 60 * 1000);
  utimesSync(file, at, at);
}

async function following(root: string) {
  const server = await startTestServer();
  cleanup(() => server.dispose());
  const owner = await seedWorkspace(server);
  const summary = await followedSession(server, owner, { kind: 'qwen-code', rootDir: root });
  const read = (results: number) =>
    until(
      () => getSession(server, owner.user.cookie, summary.id),
      (s) => s.status !== 'active' && s.messages.filter((m) => m.type === 'result').length >= results,
    );
  return { server, owner, summary, read };
}

const prompts = (session: SessionFull) =>
  session.messages.flatMap((m) => (m.type === 'user' ? [m.message.content] : []));
/** The assistant's content, without the notices the import writes as assistant messages. */
const blocks = (session: SessionFull) =>
  session.messages.flatMap((m) => (m.type === 'assistant' && !m.notice ? m.message.content : []));
const notices = (session: SessionFull) =>
  session.messages.flatMap((m) => (m.type === 'assistant' && m.notice ? [m] : []));

describe('an imported Qwen Code chat', () => {
  it('shows its prompts, thinking, answers and tool calls paired with their results, and its usage', async () => {
    const { root, file } = copyQwenScenario('write-and-commit');
    backdate(file);
    const { server, owner, summary, read } = await following(root);
    const session = await read(2);

    expect(prompts(session)).toEqual([
      'QWEN-NOTES: write NOTES.md saying "First line" and commit it.',
      'What does NOTES.md say?',
    ]);
    const content = blocks(session);
    expect(content.filter((b) => b.type === 'thinking').map((b) => b.thinking)).toEqual([
      'Write the notes first.',
      'The file holds one line.',
    ]);
    expect(content.filter((b) => b.type === 'text').map((b) => b.text)).toEqual([
      'I will write the notes file.',
      'Wrote NOTES.md and committed it.',
      'NOTES.md says: First line.',
    ]);
    const calls = content.flatMap((b) => (b.type === 'tool_use' ? [b] : []));
    expect(calls.map((c) => c.name)).toEqual(['write_file', 'run_shell_command']);
    expect(calls[0]!.input).toMatchObject({ content: 'First line\n' });
    expect(calls[1]!.input).toMatchObject({ command: 'git add NOTES.md && git commit -q -m "Add notes"' });
    const results = content.flatMap((b) => (b.type === 'tool_result' ? [b] : []));
    expect(results.map((r) => r.tool_use_id)).toEqual(calls.map((c) => c.id));
    expect(results[0]!.content).toContain('Successfully created and wrote to new file');
    expect(results[1]!.content).toContain('Exit Code: 0');
    expect(results.some((r) => r.is_error)).toBe(false);

    // The file's usage: the prompt less its cached part as input, the candidates as output.
    expect(session.usage).toMatchObject({
      inputTokens: 200 + 1300 + 1400 + 300,
      outputTokens: 30 + 20 + 12 + 9,
      cacheReadTokens: 1000 + 1200,
    });
    expect(session).toMatchObject({ status: 'completed', model: 'scripted-model' });
    expect(notices(session)).toEqual([]);
    // As a session Session Desk ran with Qwen Code says: the ACP agent `qwen-code`.
    expect(summary).toMatchObject({ agent: 'acp', acpAgent: 'qwen-code' });
    expect(session.source).toMatchObject({
      kind: 'qwen-code',
      path: file,
      conversationId: JSON.parse(readFileSync(file, 'utf8').split('\n')[0]!).sessionId,
      cwd: expect.stringMatching(/\/repo$/u),
    });
    const listed = async (agent: string) =>
      ListSessionsResponseSchema.parse(
        await (await withKey(server, owner.apiKey, 'GET', `/api/sessions?agent=${agent}`)).json(),
      ).sessions.map((s) => s.id);
    expect(await listed('acp:qwen-code')).toEqual([summary.id]);
    expect(await listed('acp')).toEqual([summary.id]);
    expect(await listed('gemini')).toEqual([]);

    // Going on from it is not offered, and the server says why rather than failing.
    const choices = ContinuationChoicesResponseSchema.parse(
      await (
        await asUser(server, owner.user.cookie, 'GET', `/api/sessions/${summary.id}/continuation`)
      ).json(),
    );
    expect(choices).toMatchObject({
      cli: 'qwen-code',
      original: { possible: false },
      sandbox: { possible: false },
    });
    expect(choices.blocked).toMatch(
      /^Session Desk cannot continue a session imported from Qwen Code's own history: .+ Resume it in Qwen Code itself \(qwen --resume [\w-]+\)/u,
    );
    const followUp = await asUser(server, owner.user.cookie, 'POST', `/api/sessions/${summary.id}/messages`, {
      content: 'And then?',
      continueIn: 'sandbox',
    });
    expect(followUp.status).toBe(409);
    expect(await followUp.text()).toContain(
      "Session Desk cannot continue a session imported from Qwen Code's own history",
    );
  });

  it('marks a failed tool call and a failed model request, and the run as failed', async () => {
    const { root, file } = copyQwenScenario('failures');
    backdate(file);
    const { read } = await following(root);
    const session = await read(1);

    const [result] = blocks(session).flatMap((b) => (b.type === 'tool_result' ? [b] : []));
    expect(result).toMatchObject({ is_error: true, content: expect.stringContaining('File not found') });
    expect(notices(session)).toEqual([
      expect.objectContaining({
        notice: 'error',
        message: { content: [{ type: 'text', text: '400 The scripted model refuses this request.' }] },
      }),
    ]);
    const [end] = session.messages.flatMap((m) => (m.type === 'result' ? [m] : []));
    expect(end).toMatchObject({ is_error: true });
    expect(session.status).toBe('failed');
  });

  it('keeps a message sent while the model worked in the run it was sent in', async () => {
    const { root, file } = copyQwenScenario('write-and-commit');
    // Written as Qwen Code's recordMidTurnUserMessage writes one, beside the tool results it
    // was drained with (an interactive session's; a headless run takes no input meanwhile).
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    const firstResult = lines.findIndex((line) => line.includes('"type":"tool_result"'));
    const base = JSON.parse(lines[firstResult]!) as Record<string, unknown>;
    const midTurn = {
      ...base,
      type: 'user',
      subtype: 'mid_turn_user_message',
      provenance: 'real_user',
      message: { role: 'user', parts: [{ text: 'Make it one line only.' }] },
      toolCallResult: undefined,
    };
    lines.splice(firstResult + 1, 0, JSON.stringify(midTurn));
    writeFileSync(file, `${lines.join('\n')}\n`);
    backdate(file);
    const { server, owner, summary } = await following(root);
    // The whole file read: its last answer and the run it ends.
    const session = await until(
      () => getSession(server, owner.user.cookie, summary.id),
      (s) =>
        s.messages.at(-1)?.type === 'result' &&
        JSON.stringify(s.messages).includes('NOTES.md says: First line.'),
    );
    expect(prompts(session)).toEqual([
      'QWEN-NOTES: write NOTES.md saying "First line" and commit it.',
      'Make it one line only.',
      'What does NOTES.md say?',
    ]);
    expect(session.messages.filter((m) => m.type === 'result')).toHaveLength(2);
  });

  it('shows the lines Qwen Code appends while the server follows its folder', async () => {
    const { root, file } = copyQwenScenario('write-and-commit');
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    const resumedAt = lines.findIndex((line) => line.includes('What does NOTES.md say?'));
    writeFileSync(file, `${lines.slice(0, resumedAt).join('\n')}\n`);
    const { read } = await following(root);
    expect(prompts(await read(1))).toHaveLength(1);

    appendFileSync(file, `${lines.slice(resumedAt).join('\n')}\n`);
    backdate(file);
    const session = await read(2);
    expect(prompts(session)).toEqual([
      'QWEN-NOTES: write NOTES.md saying "First line" and commit it.',
      'What does NOTES.md say?',
    ]);
    expect(
      blocks(session)
        .filter((b) => b.type === 'text')
        .at(-1),
    ).toMatchObject({
      text: 'NOTES.md says: First line.',
    });
  });
});
