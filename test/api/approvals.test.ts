import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeNamedCommands } from '../../src-main/agents/kinds/command/named-commands.js';
import { ROOT } from '../helpers/cli.js';
import { useCleanups } from '../helpers/cleanups.js';
import { sessionNow } from '../helpers/approvals.js';
import { until } from '../helpers/until.js';
import { asUser, createSession, seedWorkspace, startTestServer, withKey } from '../helpers/server.js';

/** The approvals setting, the inbox's refusals, and keys that may decide: no agent program needed. */

const cleanup = useCleanups();

async function setUp() {
  const server = await startTestServer();
  cleanup(() => server.dispose());
  const owner = await seedWorkspace(server);
  return { server, owner, cookie: owner.user.cookie };
}

describe('the approvals setting and the inbox', () => {
  it('is set and answered with the agent, and bad values are refused saying why', async () => {
    const { server, owner, cookie } = await setUp();
    const path = `/api/workspaces/${owner.organizationId}/agent`;
    const put = await asUser(server, cookie, 'PUT', path, {
      agent: 'demo',
      approvals: 'ask',
      approvalTimeoutSeconds: 600,
    });
    expect(put.status, await put.clone().text()).toBe(200);
    const got = await asUser(server, cookie, 'GET', path);
    expect(await got.json()).toMatchObject({ settings: { approvals: 'ask', approvalTimeoutSeconds: 600 } });
    const wrongMode = await asUser(server, cookie, 'PUT', path, { agent: 'demo', approvals: 'sometimes' });
    expect(wrongMode.status).toBe(400);
    expect(await wrongMode.text()).toContain('approvals');
    const tooShort = await asUser(server, cookie, 'PUT', path, { agent: 'demo', approvalTimeoutSeconds: 1 });
    expect(tooShort.status).toBe(400);
    expect(await tooShort.text()).toContain('approvalTimeoutSeconds');
  });

  it('says so in the transcript when the agent cannot be asked', async () => {
    const { server, owner, cookie } = await setUp();
    // A command the administrator defined prints its transcript: it has no way to ask.
    await writeNamedCommands(server.dataDir, {
      fake: [process.execPath, join(ROOT, 'test', 'fixtures', 'fake-agent.mjs'), '{prompt}', '{model}'],
    });
    const put = await asUser(server, cookie, 'PUT', `/api/workspaces/${owner.organizationId}/agent`, {
      agent: 'command',
      commandName: 'fake',
      approvals: 'ask',
    });
    expect(put.status).toBe(200);
    const created = await createSession(server, cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Hello',
    });
    const texts = async () =>
      (await sessionNow(server, cookie, created.id)).messages.flatMap((m) =>
        m.type === 'assistant' ? m.message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])) : [],
      );
    const found = await until(texts, (all) => all.some((t) => t.includes('cannot put its requests')));
    expect(found.join('\n')).toContain('this agent cannot put its requests to Session Desk');
  });

  it('refuses what it cannot answer: unknown requests and sessions, other workspaces', async () => {
    const { server, owner, cookie } = await setUp();
    const empty = await withKey(server, owner.apiKey, 'GET', '/api/approvals');
    expect(empty.status).toBe(200);
    expect(await empty.json()).toEqual({ approvals: [] });
    expect((await asUser(server, cookie, 'GET', '/api/approvals/apr_AAAAAAAAAAAAAAAAAAAAAA')).status).toBe(
      404,
    );
    const noSession = await asUser(
      server,
      cookie,
      'GET',
      `/api/approvals?organizationId=${owner.organizationId}&sessionId=ses_AAAAAAAAAAAAAAAAAAAAAA`,
    );
    expect(noSession.status).toBe(404);
    const other = await seedWorkspace(server, 'other');
    const otherKey = await withKey(
      server,
      other.apiKey,
      'GET',
      `/api/approvals?organizationId=${owner.organizationId}`,
    );
    expect(otherKey.status).toBe(403);
  });

  it('an owner makes a key that may decide; it is listed so, and a member cannot make one', async () => {
    const { server, owner, cookie } = await setUp();
    const keys = `/api/workspaces/${owner.organizationId}/keys`;
    const made = await asUser(server, cookie, 'POST', keys, { label: 'inbox', canApprove: true });
    expect(made.status).toBe(201);
    const plain = await asUser(server, cookie, 'POST', keys, { label: 'plain' });
    expect(((await plain.json()) as { key: object }).key).not.toHaveProperty('canApprove');
    const listed = (await (await asUser(server, cookie, 'GET', keys)).json()) as {
      keys: { label: string; canApprove?: boolean }[];
    };
    expect(listed.keys.find((k) => k.label === 'inbox')?.canApprove).toBe(true);
    expect(listed.keys.find((k) => k.label === 'plain')).not.toHaveProperty('canApprove');
    const member = await seedWorkspace(server, 'member');
    await server.accounts.addMember({ organizationId: owner.organizationId, email: member.user.email });
    const refused = await asUser(server, member.user.cookie, 'POST', keys, { label: 'x', canApprove: true });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('Only an owner');
    const wrongType = await asUser(server, cookie, 'POST', keys, { canApprove: 'yes' });
    expect(wrongType.status).toBe(400);
  });
});
