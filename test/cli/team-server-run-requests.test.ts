// A stop, a follow-up or a decision on what an agent asked, sent to a `serve --database` process
// that does not run the session's agent: done by the process that does, as real processes over a
// real PostgreSQL, answered as that process answers; and what the person hears when it cannot.
import { describe, expect, it } from 'vitest';
import { ApprovalResponseSchema, ApprovalsResponseSchema } from '../../src-shared/approvals.js';
import { SessionChangesResponseSchema } from '../../src-shared/changes.js';
import { FullSessionResponseSchema, SessionResponseSchema } from '../../src-shared/sessions.js';
import { setAcpProbe, type ServeProcess } from '../helpers/cli.js';
import { useSandbox } from '../helpers/cli-extra.js';
import { postgresTool, usePostgres } from '../helpers/postgres.js';
import { requireTools } from '../helpers/require-tools.js';
import { firstOwner, send } from '../helpers/team-server.js';
import { until } from '../helpers/until.js';

describe(
  'requests about a run, sent to another team server process',
  { ...requireTools(postgresTool()), timeout: 180_000 },
  () => {
    const pg = usePostgres();
    const sandbox = useSandbox();
    /** The demo agent slow enough that its run lasts through what a test sends. */
    const slow = { SESSIONDESK_DEMO_PACE_MS: '2000' };

    /** Two processes on a fresh database; the first's owner and a session whose agent runs there. */
    async function twoProcesses(env: { one: NodeJS.ProcessEnv; two: NodeJS.ProcessEnv }, dataDir?: string) {
      const database = await pg.freshDatabase();
      const serve = (environment: NodeJS.ProcessEnv, dir = sandbox.dataDir()) =>
        sandbox.serveWithEnv(['--port', '0', '--data-dir', dir, '--database', database], environment);
      const one = await serve(env.one, dataDir);
      const two = await serve(env.two);
      const { cookie, organizationId } = await firstOwner(one);
      return { one, two, cookie, organizationId };
    }

    async function startSession(serve: ServeProcess, cookie: string, organizationId: string, prompt: string) {
      const created = await send(serve.url, '/api/sessions', {
        method: 'POST',
        cookie,
        body: { organizationId, initialMessage: prompt },
      });
      expect(created.status, await created.clone().text()).toBe(201);
      return SessionResponseSchema.parse(await created.json()).session.id;
    }

    const sessionAt = async (url: string, cookie: string, id: string) => {
      const response = await send(url, `/api/sessions/${id}`, { cookie });
      expect(response.status, await response.clone().text()).toBe(200);
      return FullSessionResponseSchema.parse(await response.json()).session;
    };

    /** Each message of a session in a line: its type and its text. */
    const lines = (session: Awaited<ReturnType<typeof sessionAt>>) =>
      session.messages.map((m) =>
        m.type === 'user'
          ? `user: ${m.message.content}`
          : m.type === 'result'
            ? `result: ${m.result}`
            : `assistant: ${m.message.content.map((b) => (b.type === 'text' ? b.text : b.type)).join(' ')}`,
      );

    it('stops the agent, passes follow-ups on and ends its run with a final status through the process running it, answering as it does', async () => {
      const { one, two, cookie, organizationId } = await twoProcesses({ one: slow, two: slow });
      const id = await startSession(one, cookie, organizationId, 'Take your time');
      await until(
        () => sessionAt(two.url, cookie, id),
        (s) => s.agentState === 'running',
        30_000,
      );

      // What the process running the agent refuses, the other refuses alike.
      const wrong = { method: 'POST', cookie, body: { content: 'Elsewhere', continueIn: 'sandbox' } };
      const refusedThere = await send(one.url, `/api/sessions/${id}/messages`, wrong);
      const refusedHere = await send(two.url, `/api/sessions/${id}/messages`, wrong);
      expect(refusedHere.status).toBe(400);
      expect({ status: refusedHere.status, body: await refusedHere.text() }).toEqual({
        status: refusedThere.status,
        body: await refusedThere.text(),
      });

      // A follow-up far longer than a notification holds, in characters of every UTF-8 length.
      const long = `Hurry. ${'aé€😀'.repeat(19_000)}`;
      const followUp = await send(two.url, `/api/sessions/${id}/messages`, {
        method: 'POST',
        cookie,
        body: { content: long },
      });
      expect(followUp.status, await followUp.clone().text()).toBe(201);
      const answered = SessionResponseSchema.parse(await followUp.json()).session;
      expect(answered).toMatchObject({ id, status: 'active' });
      // The run going on was interrupted first, by the process running it, then the prompt written.
      const after = lines(await sessionAt(one.url, cookie, id));
      const at = after.indexOf(`user: ${long}`);
      expect(at, 'the follow-up is in the transcript, whole').toBeGreaterThan(0);
      expect(after[at - 1]).toBe('result: Interrupted by a follow-up prompt.');
      await until(
        () => sessionAt(two.url, cookie, id),
        (s) => s.agentState === 'running' && s.messages.length > at + 1,
        30_000,
      );

      // The stop, sent to the other process: the stopped session, as its own process answers it.
      const stop = await send(two.url, `/api/sessions/${id}/stop`, { method: 'POST', cookie });
      expect(stop.status, await stop.clone().text()).toBe(200);
      const stopped = SessionResponseSchema.parse(await stop.json()).session;
      expect(stopped).toMatchObject({ id, status: 'completed' });
      expect(stopped.agentState).toBeUndefined();
      const ended = await sessionAt(one.url, cookie, id);
      expect(ended.messages.at(-1)).toMatchObject({
        type: 'result',
        result: 'Stopped by Lead.',
        stopped: true,
      });
      // Nothing runs now, anywhere: the one refusal left.
      const again = await send(two.url, `/api/sessions/${id}/stop`, { method: 'POST', cookie });
      expect(again.status).toBe(409);
      expect(await again.text()).toContain('Nothing is running');

      // A final status set through the other process ends the run too, and stays once it has ended.
      const resumed = await send(one.url, `/api/sessions/${id}/messages`, {
        method: 'POST',
        cookie,
        body: { content: 'Start again' },
      });
      expect(resumed.status, await resumed.clone().text()).toBe(201);
      await until(
        () => sessionAt(two.url, cookie, id),
        (s) => s.agentState === 'running',
        30_000,
      );
      const marked = await send(two.url, `/api/sessions/${id}`, {
        method: 'PATCH',
        cookie,
        body: { status: 'failed' },
      });
      expect(marked.status, await marked.clone().text()).toBe(200);
      expect(SessionResponseSchema.parse(await marked.json()).session.status).toBe('failed');
      const markedThere = await sessionAt(one.url, cookie, id);
      expect(markedThere).toMatchObject({ status: 'failed' });
      expect(markedThere.agentState).toBeUndefined();
      expect(markedThere.messages.at(-1)).toMatchObject({
        type: 'result',
        result: 'Stopped: the session was marked failed.',
      });
      expect(await one.stop()).toBe(0);
      expect(await two.stop()).toBe(0);
    });

    it('checks a review against the sandbox of the process running the agent, and passes it on there', async () => {
      const { one, two, cookie, organizationId } = await twoProcesses({ one: slow, two: slow });
      const id = await startSession(one, cookie, organizationId, 'Add retries to the upload client');
      // The run has edited its clone, on the first process's disk; the second has no sandbox of it.
      const changesAt = async (url: string) =>
        SessionChangesResponseSchema.parse(
          await (await send(url, `/api/sessions/${id}/changes`, { cookie })).json(),
        );
      await until(
        () => changesAt(one.url),
        (c) => c.available && c.files.some((f) => f.path === 'src/config.js'),
        60_000,
      );
      expect(await changesAt(two.url)).toMatchObject({ available: false, reason: 'no_sandbox' });

      // A line the changes do not have: refused by the process running the agent, alike.
      const wrong = {
        method: 'POST',
        cookie,
        body: { comments: [{ path: 'src/config.js', line: 40, body: 'Hm.' }] },
      };
      const refusedThere = await send(one.url, `/api/sessions/${id}/review`, wrong);
      const refusedHere = await send(two.url, `/api/sessions/${id}/review`, wrong);
      expect(refusedHere.status).toBe(400);
      expect(await refusedHere.text()).toBe(await refusedThere.text());

      const review = await send(two.url, `/api/sessions/${id}/review`, {
        method: 'POST',
        cookie,
        body: { comments: [{ path: 'src/config.js', line: 4, body: 'Make this configurable.' }] },
      });
      expect(review.status, await review.clone().text()).toBe(201);
      const after = await sessionAt(one.url, cookie, id);
      const sent = after.messages.findLast((m) => m.type === 'user');
      expect(sent?.type === 'user' && sent.message.content).toMatch(
        /^Review of your changes:\n\nsrc\/config\.js:4\n> {3}retries: \d,\nMake this configurable\.$/u,
      );
      expect(sent).toMatchObject({ review: { comments: [{ path: 'src/config.js', line: 4, side: 'new' }] } });
      expect(lines(after).at(lines(after).indexOf(`user: ${sent?.message.content as string}`) - 1)).toBe(
        'result: Interrupted by a follow-up prompt.',
      );
      expect(await one.stop()).toBe(0);
      expect(await two.stop()).toBe(0);
    });

    it('passes a decision on what the agent asked to the run waiting for it', async () => {
      const dataDir = sandbox.dataDir();
      // The asking agent is the first process's: each process runs the programs of its data directory.
      const added = await setAcpProbe(dataDir, '--ask');
      expect(added.stderr).toBe('');
      const { one, two, cookie, organizationId } = await twoProcesses({ one: {}, two: {} }, dataDir);
      const agent = await send(one.url, `/api/workspaces/${organizationId}/agent`, {
        method: 'PUT',
        cookie,
        body: { agent: 'acp', acpAgent: 'probe', approvals: 'ask' },
      });
      expect(agent.status, await agent.clone().text()).toBe(200);
      const id = await startSession(one, cookie, organizationId, 'Ask first.');
      const pending = await until(
        async () => {
          const listed = await send(
            two.url,
            `/api/approvals?organizationId=${organizationId}&sessionId=${id}`,
            {
              cookie,
            },
          );
          return ApprovalsResponseSchema.parse(await listed.json()).approvals;
        },
        (found) => found.length > 0,
        60_000,
      );
      expect(pending).toHaveLength(1);
      const request = pending[0]!;
      expect(request).toMatchObject({ sessionId: id, title: 'printf asked' });

      // An option the request does not offer: refused by the process running the agent, alike.
      const bad = { method: 'POST', cookie, body: { optionId: 'probe-other' } };
      const badThere = await send(one.url, `/api/approvals/${request.id}`, bad);
      const badHere = await send(two.url, `/api/approvals/${request.id}`, bad);
      expect(badHere.status).toBe(400);
      expect(await badHere.text()).toBe(await badThere.text());

      const decided = await send(two.url, `/api/approvals/${request.id}`, {
        method: 'POST',
        cookie,
        body: { optionId: 'probe-allow' },
      });
      expect(decided.status, await decided.clone().text()).toBe(200);
      expect(ApprovalResponseSchema.parse(await decided.json()).approval).toMatchObject({
        id: request.id,
        decision: 'allow_once',
        optionId: 'probe-allow',
        decidedBy: { kind: 'user', name: 'Lead' },
      });
      // The agent heard it: its run goes on and ends saying what it was answered.
      const done = await until(
        () => sessionAt(two.url, cookie, id),
        (s) => s.status !== 'active',
        60_000,
      );
      expect(done.status).toBe('completed');
      expect(lines(done)).toContain('assistant: asked: probe-allow');
      expect(await one.stop()).toBe(0);
      expect(await two.stop()).toBe(0);
    });

    it('answers 503 when the process running the agent does not answer or has stopped, and works once its run is taken over', async () => {
      const { one, two, cookie, organizationId } = await twoProcesses({
        one: slow,
        two: { SESSIONDESK_DEMO_PACE_MS: '5' },
      });
      const id = await startSession(one, cookie, organizationId, 'Take your time');
      await until(
        () => sessionAt(two.url, cookie, id),
        (s) => s.agentState === 'running',
        30_000,
      );

      // The first process hangs: the second waits 5 seconds for it to take the stop, then says so.
      const pid = one.child.pid!;
      process.kill(pid, 'SIGSTOP');
      sandbox.defer(() => {
        if (one.child.exitCode === null && one.child.signalCode === null) process.kill(pid, 'SIGCONT');
      });
      const asked = Date.now();
      const hung = await send(two.url, `/api/sessions/${id}/stop`, { method: 'POST', cookie });
      const waited = Date.now() - asked;
      expect(hung.status, await hung.clone().text()).toBe(503);
      expect(hung.headers.get('retry-after')).toBe('5');
      expect(await hung.text()).toContain('did not answer within 5 seconds');
      expect(waited).toBeGreaterThanOrEqual(5000);
      expect(waited).toBeLessThan(10_000);

      // Back again, it never does the stop it heard late (the second had given up on it), and
      // takes what comes next.
      process.kill(pid, 'SIGCONT');
      const followUp = await send(two.url, `/api/sessions/${id}/messages`, {
        method: 'POST',
        cookie,
        body: { content: 'Go on' },
      });
      expect(followUp.status, await followUp.clone().text()).toBe(201);
      const resumed = lines(await sessionAt(two.url, cookie, id));
      expect(resumed.filter((l) => l.startsWith('result: '))).toEqual([
        'result: Interrupted by a follow-up prompt.',
      ]);
      await until(
        () => sessionAt(two.url, cookie, id),
        (s) => s.agentState === 'running',
        30_000,
      );

      // The first process dies mid-run: until its run is taken over, the person is told when to retry.
      await one.kill();
      const gone = await send(two.url, `/api/sessions/${id}/stop`, { method: 'POST', cookie });
      expect(gone.status, await gone.clone().text()).toBe(503);
      expect(gone.headers.get('retry-after')).toBe('15');
      expect(await gone.text()).toContain('has stopped');
      const failed = await until(
        () => sessionAt(two.url, cookie, id),
        (s) => s.status === 'failed',
        40_000,
      );
      expect(failed.agentState).toBeUndefined();
      // Taken over: the second runs what is asked of the session now.
      const retried = await send(two.url, `/api/sessions/${id}/messages`, {
        method: 'POST',
        cookie,
        body: { content: 'Once more' },
      });
      expect(retried.status, await retried.clone().text()).toBe(201);
      const finished = await until(
        () => sessionAt(two.url, cookie, id),
        (s) => s.status !== 'active',
        60_000,
      );
      expect(finished.status).toBe('completed');
      expect(await two.stop()).toBe(0);
    });
  },
);
