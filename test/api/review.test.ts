// A review over HTTP: comments on lines of a session's real changes (the demo agent's clone of
// its sample project, changed by its run), checked against git's diff, sent to the agent as one
// follow-up quoting each line, kept structured in the transcript and read back with GET.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ErrorResponseSchema,
  SessionChangesResponseSchema,
  SessionReviewsResponseSchema,
  placeComment,
  type SessionChanges,
} from '../../src-shared/index.js';
import { writeNamedCommands } from '../../src-main/agents/kinds/command/named-commands.js';
import { sandboxPath } from '../../src-main/agents/sandbox/session-folder.js';
import { waitForResults } from '../helpers/agent-runs.js';
import { useCleanups } from '../helpers/cleanups.js';
import {
  asUser,
  createSession,
  seedWorkspace,
  startTestServer,
  useAgent,
  withKey,
  type TestServer,
} from '../helpers/server.js';

const cleanup = useCleanups();

/** A demo-agent session whose first run is over: src/config.js edited, a note written. */
async function reviewedSession() {
  const server = await startTestServer({ agentPaceMs: 0 });
  cleanup(() => server.dispose());
  const owner = await seedWorkspace(server);
  await useAgent(server, owner, 'demo');
  const cookie = owner.user.cookie;
  const { id } = await createSession(server, cookie, {
    organizationId: owner.organizationId,
    initialMessage: 'Add retries to the upload client.',
  });
  await waitForResults(server, cookie, id, 1, 30_000);
  const changes = await changesOf(server, owner.apiKey, id);
  return { server, owner, cookie, id, changes, dir: sandboxPath(server.sandboxRoot, id) };
}

async function changesOf(server: TestServer, apiKey: string, id: string): Promise<SessionChanges> {
  const response = await withKey(server, apiKey, 'GET', `/api/sessions/${id}/changes`);
  expect(response.status).toBe(200);
  const changes = SessionChangesResponseSchema.parse(await response.json());
  if (!changes.available) throw new Error(changes.message);
  return changes;
}

const NOTE = 'notes/add-retries-to-the-upload-client.md';

describe('POST /api/sessions/{id}/review', () => {
  it('sends one follow-up quoting each commented line, keeps the comments, and the agent answers them', async () => {
    const { server, owner, cookie, id, changes, dir } = await reviewedSession();
    const config = readFileSync(join(dir, 'src/config.js'), 'utf8').split('\n');
    const retries = config.findIndex((l) => l.includes('retries:')) + 1;
    expect(retries).toBe(4);
    const note = readFileSync(join(dir, NOTE), 'utf8').split('\n');

    const posted = await asUser(server, cookie, 'POST', `/api/sessions/${id}/review`, {
      comments: [
        { path: 'src/config.js', line: retries, body: '  Make this configurable.  ' },
        { path: NOTE, startLine: 1, line: 3, body: 'Shorter, please.' },
        { path: 'src/config.js', line: 4, side: 'old', body: 'Why was zero wrong?' },
      ],
      message: 'Then run the tests.',
    });
    expect(posted.status, await posted.clone().text()).toBe(201);
    const { session: summary } = (await posted.json()) as { session: { status: string } };
    expect(summary.status).toBe('active');

    const session = await waitForResults(server, cookie, id, 2, 30_000);
    const users = session.messages.filter((m) => m.type === 'user');
    expect(users).toHaveLength(2);
    const review = users[1]!;
    const expected = [
      'Review of your changes:',
      '',
      `src/config.js:4\n> ${config[3]}\nMake this configurable.`,
      '',
      `${NOTE}:1-3\n> ${note[0]}\n> ${note[1]}\n> ${note[2]}\nShorter, please.`,
      '',
      'src/config.js:4 (before your changes)\n>   retries: 0,\nWhy was zero wrong?',
      '',
      'Then run the tests.',
    ].join('\n');
    expect(review.message.content).toBe(expected);
    expect(review.review).toEqual({
      comments: [
        {
          path: 'src/config.js',
          line: 4,
          side: 'new',
          body: 'Make this configurable.',
          lines: [`+${config[3]}`],
        },
        {
          path: NOTE,
          line: 3,
          startLine: 1,
          side: 'new',
          body: 'Shorter, please.',
          lines: note.slice(0, 3).map((l) => `+${l}`),
        },
        {
          path: 'src/config.js',
          line: 4,
          side: 'old',
          body: 'Why was zero wrong?',
          lines: ['-  retries: 0,'],
        },
      ],
      message: 'Then run the tests.',
    });
    // Before it was sent, each comment stood at its lines; the list's preview is the review's text.
    for (const comment of review.review!.comments) {
      expect(placeComment(changes.files, comment)).toEqual({
        resolved: false,
        startLine: comment.startLine ?? comment.line,
        line: comment.line,
      });
    }

    // The demo agent answered the comments on the new side in the files, and committed.
    expect(readFileSync(join(dir, 'src/config.js'), 'utf8').split('\n')[3]).toBe(
      `${config[3]} // reviewed: Make this configurable.`,
    );
    expect(readFileSync(join(dir, NOTE), 'utf8').split('\n')[2]).toBe(
      `${note[2]} (reviewed: Shorter, please.)`,
    );

    // Read back: the review, its comments and where each stands in the changes now.
    const listed = await withKey(server, owner.apiKey, 'GET', `/api/sessions/${id}/review`);
    expect(listed.status).toBe(200);
    const { reviews } = SessionReviewsResponseSchema.parse(await listed.json());
    expect(reviews).toEqual([
      { ...review.review, index: session.messages.indexOf(review), sentAt: expect.any(String) as string },
    ]);
    const after = await changesOf(server, owner.apiKey, id);
    const places = reviews[0]!.comments.map((c) => placeComment(after.files, c));
    // The two lines it changed are resolved; the removed line is still removed: open.
    expect(places).toEqual([
      { resolved: true, line: 4 },
      { resolved: true, line: 3 },
      { resolved: false, startLine: 4, line: 4 },
    ]);
  });

  it('refuses a comment on no line of the changes, naming it; nothing is sent', async () => {
    const { server, owner, cookie, id } = await reviewedSession();
    const refused = async (body: unknown) => {
      const response = await asUser(server, cookie, 'POST', `/api/sessions/${id}/review`, body);
      expect(response.status).toBe(400);
      return ErrorResponseSchema.parse(await response.json()).error;
    };
    const ok = { path: 'src/config.js', line: 4, body: 'Fine.' };

    // A path that is not among the changes (a file of the project that did not change).
    expect(await refused({ comments: [ok, { path: 'src/upload.js', line: 1, body: 'Hm.' }] })).toMatchObject({
      code: 'validation_failed',
      message:
        "Comment 2 names no line of the session's changes: src/upload.js is not a file of the session's changes.",
      details: [{ path: 'body.comments.1', message: "src/upload.js is not a file of the session's changes" }],
    });
    // A line past the hunk (the file has 7 lines; its one hunk shows lines 1 to 6).
    expect(await refused({ comments: [{ ...ok, line: 7 }] })).toMatchObject({
      details: [
        {
          path: 'body.comments.0',
          message: 'line 7 of src/config.js is not in a hunk of its diff on the new side',
        },
      ],
    });
    // The old side: an added file has no lines on the base.
    expect(await refused({ comments: [{ path: NOTE, line: 1, side: 'old', body: 'Hm.' }] })).toMatchObject({
      details: [{ path: 'body.comments.0', message: `${NOTE} has no lines on the base in its diff` }],
    });
    // A range of lines in one hunk only; at most 50 lines; the start before the end.
    expect(await refused({ comments: [{ ...ok, startLine: 5, line: 4 }] })).toMatchObject({
      details: [{ path: 'body.comments.0.startLine', message: 'must not be after line' }],
    });
    expect(await refused({ comments: [{ ...ok, startLine: 1, line: 51 }] })).toMatchObject({
      details: [{ path: 'body.comments.0.startLine', message: 'a comment spans at most 50 lines' }],
    });
    // Bounds: comments, their words, the message; a strict body.
    expect((await refused({ comments: Array.from({ length: 51 }, () => ok) })).details).toEqual([
      { path: 'body.comments', message: expect.stringContaining('at most 50') as string },
    ]);
    expect((await refused({ comments: [] })).details?.[0]?.path).toBe('body.comments');
    expect((await refused({ comments: [{ ...ok, body: 'x'.repeat(4001) }] })).details?.[0]?.path).toBe(
      'body.comments.0.body',
    );
    expect((await refused({ comments: [{ ...ok, body: '   ' }] })).details).toEqual([
      { path: 'body.comments.0.body', message: 'must not be blank' },
    ]);
    expect((await refused({ comments: [ok], message: 'x'.repeat(100_001) })).details?.[0]?.path).toBe(
      'body.message',
    );
    expect((await refused({ comments: [{ ...ok, side: 'left' }] })).details?.[0]?.path).toBe(
      'body.comments.0.side',
    );
    expect((await refused({ comments: [ok], content: 'hi' })).details).toEqual([
      { path: 'body.content', message: 'is not a field this request takes' },
    ]);
    // 50 comments of 4,000 characters: each is fine, together more than a follow-up holds.
    const long = await refused({
      comments: Array.from({ length: 50 }, () => ({ ...ok, body: 'y'.repeat(4000) })),
    });
    expect(long.details).toEqual([{ path: 'body.comments', message: 'quote too much for one follow-up' }]);
    expect(long.message).toMatch(/^The review comes to 201,\d{3} characters/u);

    // An API key: the same 400 a follow-up gets.
    const keyed = await withKey(server, owner.apiKey, 'POST', `/api/sessions/${id}/review`, {
      comments: [ok],
    });
    expect(keyed.status).toBe(400);
    expect(ErrorResponseSchema.parse(await keyed.json()).error.code).toBe('api_key_not_allowed');

    // Nothing of it reached the session.
    const session = await waitForResults(server, cookie, id, 1);
    expect(session.messages.filter((m) => m.type === 'user')).toHaveLength(1);
    expect(session.messages.filter((m) => m.type === 'result')).toHaveLength(1);
  });

  it('refuses a review of a session without changes, and of another workspace’s session', async () => {
    const server = await startTestServer();
    cleanup(() => server.dispose());
    const owner = await seedWorkspace(server);
    const other = await seedWorkspace(server, 'other');
    // A command of the administrator's, with no repository: its session has no changes to show.
    await writeNamedCommands(server.dataDir, { quiet: [process.execPath, '-e', '0'] });
    const put = await asUser(
      server,
      owner.user.cookie,
      'PUT',
      `/api/workspaces/${owner.organizationId}/agent`,
      {
        agent: 'command',
        commandName: 'quiet',
      },
    );
    expect(put.status, await put.clone().text()).toBe(200);
    const { id } = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Hello',
    });
    const body = { comments: [{ path: 'README.md', line: 1, body: 'Hm.' }] };
    const none = await asUser(server, owner.user.cookie, 'POST', `/api/sessions/${id}/review`, body);
    expect(none.status).toBe(400);
    expect(ErrorResponseSchema.parse(await none.json()).error).toMatchObject({
      message:
        'There are no changes to comment on: This session has no repository, so there are no changes to show.',
      details: [{ path: 'body.comments.0' }],
    });
    const elsewhere = await asUser(server, other.user.cookie, 'POST', `/api/sessions/${id}/review`, body);
    expect(elsewhere.status).toBe(403);
    const unknown = await asUser(server, owner.user.cookie, 'POST', '/api/sessions/ses_nope/review', body);
    expect(unknown.status).toBe(404);
    const listed = await withKey(server, owner.apiKey, 'GET', `/api/sessions/${id}/review`);
    expect(SessionReviewsResponseSchema.parse(await listed.json())).toEqual({ reviews: [] });
    expect((await withKey(server, other.apiKey, 'GET', `/api/sessions/${id}/review`)).status).toBe(403);
  });
});
