import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalsResponseSchema } from '../../src-shared/approvals.js';
import { pendingApprovals, sessionNow } from '../helpers/approvals.js';
import { setAcpProbe } from '../helpers/cli.js';
import { transcript } from '../helpers/run-control.js';
import { asUser, createSession, seedWorkspace, startTestServer, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';

/**
 * What an agent may put in front of people, through the real ACP path: an agent (the probe,
 * added by the administrator) that asks 30 permissions at once, each with a 20 KB title hiding
 * a terminal escape and a right-to-left override, a 200 KB detail, and an option labelled
 * "Reject (deny)" that allows always.
 */

const FLOOD = 30;
const PENDING_AT_MOST = 8;

describe('what an agent asks is bounded', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  beforeAll(async () => {
    server = await startTestServer({ agentEnv: { PATH: process.env.PATH } });
    owner = await seedWorkspace(server);
    const set = await setAcpProbe(server.dataDir, '--flood', String(FLOOD));
    expect(set.code, set.stderr).toBe(0);
    const chosen = await asUser(
      server,
      owner.user.cookie,
      'PUT',
      `/api/workspaces/${owner.organizationId}/agent`,
      {
        agent: 'acp',
        acpAgent: 'probe',
        approvals: 'ask',
      },
    );
    expect(chosen.status, await chosen.clone().text()).toBe(200);
  });
  afterAll(async () => server.dispose());

  it(
    'a few requests wait at once, the rest are rejected as they come and the transcript says so; texts are cut and cleaned; each option shows its real kind',
    { timeout: 90_000 },
    async () => {
      const { cookie } = owner.user;
      const { id } = await createSession(server, cookie, {
        organizationId: owner.organizationId,
        initialMessage: 'Ask for everything at once.',
      });
      const notice = 'asked more than 8 things waiting at once';
      await until(
        async () => transcript(await sessionNow(server, cookie, id)),
        (all) => all.some((line) => line.includes(notice)),
        60_000,
      );
      const inbox = await asUser(
        server,
        cookie,
        'GET',
        `/api/approvals?organizationId=${owner.organizationId}`,
      );
      expect(inbox.status).toBe(200);
      const body = await inbox.text();
      expect(Buffer.byteLength(body)).toBeLessThan(1024 * 1024);
      const { approvals } = ApprovalsResponseSchema.parse(JSON.parse(body));
      expect(approvals).toHaveLength(PENDING_AT_MOST);
      for (const approval of approvals) {
        expect(approval.title.length).toBeLessThanOrEqual(200);
        expect(approval.title).toMatch(/^Tidy the build folder gnp\.exe x+…$/u);
        expect(approval.detail!.length).toBeLessThan(100_200);
        expect(approval.detail).toMatch(/^\$ rm -rf build\/\d+\n\nline\nd/u);
        expect(approval.detail).toMatch(/more characters not shown: Session Desk shows 100000\.$/u);
        // eslint-disable-next-line no-control-regex
        expect(JSON.stringify(approval)).not.toMatch(/\u001b|\u202e|\\u001b|\\u202e/u);
        // The lying option keeps its label, beside the kind that says what it does.
        expect(approval.options).toEqual([
          { id: 'lying', kind: 'allow_always', label: 'Reject (deny)' },
          { id: 'no', kind: 'reject_once', label: 'No' },
        ]);
      }
      const asked = transcript(await sessionNow(server, cookie, id)).find((line) =>
        line.includes('Choices:'),
      );
      expect(asked).toContain(
        `Choices: Allow for this session (the agent's "Reject (deny)") · Reject (the agent's "No")`,
      );

      // The lying option allows always, as its kind says; the rest are rejected, those that
      // came while others waited too.
      const chosen = await asUser(server, cookie, 'POST', `/api/approvals/${approvals[0]!.id}`, {
        optionId: 'lying',
      });
      expect(chosen.status).toBe(200);
      expect(await chosen.json()).toMatchObject({
        approval: { decision: 'allow_always', optionId: 'lying' },
      });
      const lines = await until(
        async () => {
          for (const approval of await pendingApprovals(server, cookie, owner.organizationId, id)) {
            const rejected = await asUser(server, cookie, 'POST', `/api/approvals/${approval.id}`, {
              decision: 'reject_once',
            });
            expect([200, 409]).toContain(rejected.status);
          }
          return transcript(await sessionNow(server, cookie, id));
        },
        (all) => all.some((line) => line.startsWith('result:')),
        60_000,
      );
      // The agent heard an answer to every request, those past the cap at once (what it said
      // streams into messages and its result both: each request is counted once).
      const said = new Map<string, string>();
      for (const line of lines.flatMap((l) => l.split('\n'))) {
        const answer = /flood (\d+): (\w+)$/u.exec(line);
        if (answer) said.set(answer[1]!, answer[2]!);
      }
      expect(said.size).toBe(FLOOD);
      expect([...said.values()].sort()).toEqual(['lying', ...Array<string>(FLOOD - 1).fill('no')]);
      // Every request the agent made is in the transcript as a tool call, each name a clean line.
      const calls = (await sessionNow(server, cookie, id)).messages.flatMap((m) =>
        m.type === 'assistant'
          ? m.message.content.flatMap((b) => (b.type === 'tool_use' ? [b.name] : []))
          : [],
      );
      expect(calls).toHaveLength(FLOOD);
      for (const name of calls) expect(name).toMatch(/^Tidy the build folder gnp\.exe x+…$/u);
      expect(lines.filter((line) => line.includes(notice))).toHaveLength(1);
    },
  );
});
