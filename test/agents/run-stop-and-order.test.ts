import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realFiles, type FileLayer } from '../../src-main/store/file-layer.js';
import { getSession, waitForResults } from '../helpers/agent-runs.js';
import { agentPid, ended, release, transcript, waitForText, WAITING_AGENT } from '../helpers/run-control.js';
import { asUser, createSession, seedWorkspace, startTestServer, type TestServer } from '../helpers/server.js';

describe('stopping a run ends its whole process group', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  beforeAll(async () => {
    server = await startTestServer({ agentCommand: WAITING_AGENT });
    owner = await seedWorkspace(server);
  });
  afterAll(async () => server.dispose());

  async function startWaiting(prompt: string) {
    const { id } = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: prompt,
    });
    await waitForText(server, owner.user.cookie, id, `Working on: ${prompt}`);
    const leader = await agentPid(server.sandboxRoot, id, 'leader');
    const child = await agentPid(server.sandboxRoot, id, 'child');
    expect(ended(leader)).toBe(false);
    expect(ended(child)).toBe(false);
    return { id, leader, child };
  }

  it('POST stop ends the agent and the program it started, with a neutral stopped result', async () => {
    const { id, leader, child } = await startWaiting('Index the docs');
    const response = await asUser(server, owner.user.cookie, 'POST', `/api/sessions/${id}/stop`);
    expect(response.status).toBe(200);
    expect(ended(leader)).toBe(true);
    expect(ended(child)).toBe(true);
    const session = await getSession(server, owner.user.cookie, id);
    expect(session.status).toBe('completed');
    expect(session.agentState).toBeUndefined();
    expect(session.messages.at(-1)).toMatchObject({
      type: 'result',
      is_error: false,
      stopped: true,
      result: 'Stopped by User owner.',
    });
  });

  it('a group that ignores SIGTERM is killed after the grace period', { timeout: 30_000 }, async () => {
    const { id, leader, child } = await startWaiting('STUBBORN work');
    const response = await asUser(server, owner.user.cookie, 'POST', `/api/sessions/${id}/stop`);
    expect(response.status).toBe(200);
    expect(ended(leader)).toBe(true);
    expect(ended(child)).toBe(true);
  });

  it('a follow-up lands after the result of the run it interrupts', async () => {
    const { id, leader } = await startWaiting('Write the parser');
    const sent = await asUser(server, owner.user.cookie, 'POST', `/api/sessions/${id}/messages`, {
      content: 'Use a table instead',
    });
    expect(sent.status).toBe(201);
    expect(ended(leader)).toBe(true);
    await waitForText(server, owner.user.cookie, id, 'Working on: Use a table instead');
    release(server.sandboxRoot, id);
    const session = await waitForResults(server, owner.user.cookie, id, 2);
    expect(transcript(session)).toEqual([
      'user: Write the parser',
      'assistant: Working on: Write the parser',
      'result: Interrupted by a follow-up prompt.',
      'user: Use a table instead',
      'assistant: Working on: Use a table instead',
      'assistant: Finishing: Use a table instead',
      'result: Done: Use a table instead',
    ]);
    expect(session.status).toBe('completed');
  });
});

describe('a status set by PATCH and a run that finishes', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  /** While set, the disk holds every fsync until it is resolved: a slow disk, made still. */
  let stall: { promise: Promise<void>; resolve: () => void } | null = null;
  const slowDisk: FileLayer = {
    ...realFiles,
    async datasync(handle) {
      await stall?.promise;
      return realFiles.datasync(handle);
    },
  };

  beforeAll(async () => {
    server = await startTestServer({ agentCommand: WAITING_AGENT, store: { files: slowDisk } });
    owner = await seedWorkspace(server);
  });
  afterAll(async () => server.dispose());

  const patch = (id: string, status: string) =>
    asUser(server, owner.user.cookie, 'PATCH', `/api/sessions/${id}`, { status });

  it('the PATCH comes after the run ended: the PATCH stands', async () => {
    const { id } = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Tidy the imports',
    });
    await waitForText(server, owner.user.cookie, id, 'Working on: Tidy the imports');
    release(server.sandboxRoot, id);
    expect((await waitForResults(server, owner.user.cookie, id)).status).toBe('completed');
    expect((await patch(id, 'failed')).status).toBe(200);
    expect((await getSession(server, owner.user.cookie, id)).status).toBe('failed');
  });

  it("the PATCH comes while the run is writing its last output: the run's end does not overwrite it", async () => {
    const { id } = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Rename the module',
    });
    await waitForText(server, owner.user.cookie, id, 'Working on: Rename the module');
    const leader = await agentPid(server.sandboxRoot, id, 'leader');
    // The agent's last message is held on its way to disk, so its run has not ended yet
    // when the PATCH is written; then the disk moves again and the run ends.
    let resume = () => undefined as void;
    stall = { promise: new Promise<void>((resolve) => (resume = resolve)), resolve: () => resume() };
    release(server.sandboxRoot, id);
    await expect.poll(() => ended(leader), { timeout: 20_000 }).toBe(true);
    const patched = patch(id, 'failed');
    // The PATCH is applied (its write waits for the disk like the run's last message).
    const listed = async () => {
      const list = await asUser(
        server,
        owner.user.cookie,
        'GET',
        `/api/sessions?organizationId=${owner.organizationId}`,
      );
      return ((await list.json()) as { sessions: { id: string; status: string }[] }).sessions.find(
        (s) => s.id === id,
      )?.status;
    };
    await expect.poll(listed).toBe('failed');
    stall.resolve();
    stall = null;
    expect((await patched).status).toBe(200);
    const session = await waitForResults(server, owner.user.cookie, id);
    expect(transcript(session).at(-2)).toBe('assistant: Finishing: Rename the module');
    expect(session.status).toBe('failed');
  });
});
