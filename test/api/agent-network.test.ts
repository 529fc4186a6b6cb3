import { afterEach, describe, expect, it } from 'vitest';
import { AgentSettingsResponseSchema } from '../../src-shared/accounts.js';
import { ErrorResponseSchema } from '../../src-shared/errors.js';
import { asUser, seedWorkspace, startTestServer, type TestServer } from '../helpers/server.js';

describe("the hosts a workspace's agents may reach (PUT /api/workspaces/{org}/agent)", () => {
  const servers: TestServer[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.dispose();
  });

  async function workspace(agentEnv?: NodeJS.ProcessEnv) {
    const server = await startTestServer(agentEnv ? { agentEnv } : {});
    servers.push(server);
    const owner = await seedWorkspace(server);
    const path = `/api/workspaces/${owner.organizationId}/agent`;
    return { server, owner, path };
  }

  it('owners set the list (normalised), everyone in the workspace reads it, and leaving it out opens the network', async () => {
    const { server, owner, path } = await workspace();
    const set = await asUser(server, owner.user.cookie, 'PUT', path, {
      agent: 'demo',
      allowedHosts: [' API.Anthropic.com ', '*.github.com:443', 'localhost', 'localhost'],
    });
    expect(set.status, await set.clone().text()).toBe(200);
    const body = AgentSettingsResponseSchema.parse(await set.json());
    expect(body.settings).toEqual({
      agent: 'demo',
      allowedHosts: ['api.anthropic.com', '*.github.com:443', 'localhost'],
    });
    expect(typeof body.networkEnforced).toBe('boolean');

    const member = await seedWorkspace(server, 'member');
    await server.accounts.addMember({ organizationId: owner.organizationId, email: member.user.email });
    const read = AgentSettingsResponseSchema.parse(
      await (await asUser(server, member.user.cookie, 'GET', path)).json(),
    );
    expect(read.settings.allowedHosts).toEqual(['api.anthropic.com', '*.github.com:443', 'localhost']);
    // Members cannot open the network, nor change the list.
    expect((await asUser(server, member.user.cookie, 'PUT', path, { agent: 'demo' })).status).toBe(403);
    expect(
      (
        await asUser(server, member.user.cookie, 'PUT', path, {
          agent: 'demo',
          allowedHosts: ['evil.example'],
        })
      ).status,
    ).toBe(403);
    const after = AgentSettingsResponseSchema.parse(
      await (await asUser(server, owner.user.cookie, 'GET', path)).json(),
    );
    expect(after.settings.allowedHosts).toEqual(['api.anthropic.com', '*.github.com:443', 'localhost']);

    const opened = await asUser(server, owner.user.cookie, 'PUT', path, { agent: 'demo' });
    expect(AgentSettingsResponseSchema.parse(await opened.json()).settings).toEqual({ agent: 'demo' });
  });

  it('refuses an empty list, saying that open is leaving the setting out', async () => {
    const { server, owner, path } = await workspace();
    const empty = await asUser(server, owner.user.cookie, 'PUT', path, { agent: 'demo', allowedHosts: [] });
    expect(empty.status).toBe(400);
    const { error } = ErrorResponseSchema.parse(await empty.json());
    expect(error.details).toEqual([
      {
        path: 'body.allowedHosts',
        message: expect.stringContaining('to leave the network open, leave allowedHosts out'),
      },
    ]);
  });

  it('refuses what is not a host pattern, and keeps the setting as it was', async () => {
    const { server, owner, path } = await workspace();
    const patterns = [
      'https://example.com',
      '*',
      'example.com/path',
      'exa mple.com',
      'example.com:0',
      'example.com:65536',
      '*.',
      '[::1]',
    ];
    for (const pattern of patterns) {
      const bad = await asUser(server, owner.user.cookie, 'PUT', path, {
        agent: 'demo',
        allowedHosts: ['example.org', pattern],
      });
      expect(bad.status, pattern).toBe(400);
      const { error } = ErrorResponseSchema.parse(await bad.json());
      expect(error.details?.[0]?.path, pattern).toBe('body.allowedHosts.1');
    }
    const unchanged = AgentSettingsResponseSchema.parse(
      await (await asUser(server, owner.user.cookie, 'GET', path)).json(),
    );
    expect(unchanged.settings.allowedHosts).toBeUndefined();
  });

  it('says plainly where the list cannot be enforced: no operating-system sandbox', async () => {
    const { server, owner, path } = await workspace({
      PATH: process.env.PATH,
      SESSIONDESK_OS_SANDBOX: 'off',
    });
    const set = await asUser(server, owner.user.cookie, 'PUT', path, {
      agent: 'demo',
      allowedHosts: ['example.org'],
    });
    const body = AgentSettingsResponseSchema.parse(await set.json());
    expect(body.networkEnforced).toBe(false);
    expect(body.networkProblem).toContain('cannot be enforced');
    expect(body.networkProblem).toContain('SESSIONDESK_OS_SANDBOX=off');
  });
});
