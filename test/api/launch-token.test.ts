import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ErrorResponseSchema,
  SetupResponseSchema,
  SetupStatusSchema,
  SignInResponseSchema,
} from '../../src-shared/index.js';
import { DEMO } from '../../src-main/demo/people.js';
import { DEMO_SIGN_IN_FILE } from '../../src-main/demo/sign-in.js';
import { writeNamedCommands } from '../../src-main/agents/kinds/command/named-commands.js';
import { installRecordedClis } from '../helpers/recorded-clis.js';
import {
  asUser,
  launchCookie,
  PASSWORD,
  seedWorkspace,
  startTestServer,
  type TestServer,
} from '../helpers/server.js';
import { sqljsOnly } from '../helpers/require-tools.js';

const OWNER = { email: 'owner@example.test', name: 'Owner', password: PASSWORD, workspaceName: 'Mine' };

function post(server: TestServer, path: string, cookie: string | null, body?: unknown) {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: {
      origin: server.origin,
      'content-type': 'application/json',
      ...(cookie === null ? {} : { cookie }),
    },
    body: JSON.stringify(body ?? {}),
  });
}

async function expectNeedsToken(response: Response) {
  expect(response.status).toBe(403);
  const { error } = ErrorResponseSchema.parse(await response.json());
  expect(error.message).toContain('open the URL "sessiondesk serve" printed');
  expect(error.message).toContain('?token=');
}

const cookieOf = (response: Response) => (response.headers.get('set-cookie') ?? '').split(';')[0]!;

describe('first-run setup needs the launch token', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => server.dispose());

  it('without it, neither setup nor the demo can be had by whoever calls first', async () => {
    await expectNeedsToken(await post(server, '/api/setup', null, OWNER));
    await expectNeedsToken(await post(server, '/api/setup/demo', null));
    await expectNeedsToken(await post(server, '/api/demo/sign-in', null));
    // A cookie someone made up is no better.
    await expectNeedsToken(await post(server, '/api/setup', '__launch=guess', OWNER));
    expect(await server.storage.repos.users.count()).toBe(0);
    expect(await server.storage.repos.workspaces.findById(DEMO.organizationId)).toBeNull();
    const status = SetupStatusSchema.parse(await (await fetch(`${server.url}/api/setup`)).json());
    expect(status).toMatchObject({ needed: true, demo: false, launchToken: false });
  });

  it('a wrong token is refused; the right one is traded for a cookie that setup takes, once', async () => {
    const wrong = await fetch(`${server.url}/api/auth/launch`, {
      method: 'POST',
      headers: { origin: server.origin, 'content-type': 'application/json' },
      body: JSON.stringify({ token: 'x'.repeat(43) }),
    });
    expect(wrong.status).toBe(403);
    expect(wrong.headers.get('set-cookie')).toBeNull();

    const cookie = await launchCookie(server);
    // The cookie is not the page's to read, and goes to this site only.
    const exchange = await fetch(`${server.url}/api/auth/launch`, {
      method: 'POST',
      headers: { origin: server.origin, 'content-type': 'application/json' },
      body: JSON.stringify({ token: server.launchToken }),
    });
    expect(exchange.headers.get('set-cookie')).toMatch(/HttpOnly/u);
    expect(exchange.headers.get('set-cookie')).toMatch(/SameSite=Strict/u);
    const status = SetupStatusSchema.parse(
      await (await fetch(`${server.url}/api/setup`, { headers: { cookie } })).json(),
    );
    expect(status.launchToken).toBe(true);

    // From another origin, the cookie does not count.
    const foreign = await fetch(`${server.url}/api/setup`, {
      method: 'POST',
      headers: { origin: 'http://127.0.0.1:1', 'content-type': 'application/json', cookie },
      body: JSON.stringify(OWNER),
    });
    expect(foreign.status).toBe(403);
    expect(await server.storage.repos.users.count()).toBe(0);

    const setup = await post(server, '/api/setup', cookie, OWNER);
    expect(setup.status).toBe(201);
    expect(SetupResponseSchema.parse(await setup.json()).user.email).toBe(OWNER.email);
    const again = await post(server, '/api/setup', cookie, { ...OWNER, email: 'eve@example.test' });
    expect(again.status).toBe(409);
  });
});

describe(
  'the demo sign-in',
  sqljsOnly('the demo workspace lives in a data directory; a team server answers 503 for it'),
  () => {
    let server: TestServer;
    let cookie: string;
    let demoOwner: string;
    let bin = '';
    beforeAll(async () => {
      // An agent CLI installed and a command defined: both are there to be chosen, but not by the demo.
      bin = installRecordedClis(mkdtempSync(join(tmpdir(), 'launch-clis-')));
      server = await startTestServer({
        agentEnv: { PATH: '/nonexistent', SESSIONDESK_CODEX_BIN: join(bin, 'codex') },
      });
      await writeNamedCommands(server.dataDir, { mine: ['my-agent', '-p'] });
      cookie = await launchCookie(server);
      const demo = await post(server, '/api/setup/demo', cookie);
      expect(demo.status).toBe(201);
      demoOwner = cookieOf(demo);
    });
    afterAll(async () => {
      await server.dispose();
      rmSync(bin, { recursive: true, force: true });
    });

    it('never serves the demo password; the token signs in as the demo owner instead', async () => {
      const { password } = JSON.parse(readFileSync(join(server.dataDir, DEMO_SIGN_IN_FILE), 'utf8')) as {
        password: string;
      };
      const old = await fetch(`${server.url}/api/demo/sign-in`);
      expect(old.status).toBe(404);
      expect(await old.text()).not.toContain(password);
      const openapi = await (await fetch(`${server.url}/api/openapi.json`)).text();
      expect(openapi).not.toContain(password);

      await expectNeedsToken(await post(server, '/api/demo/sign-in', null));
      const signedIn = await post(server, '/api/demo/sign-in', cookie);
      expect(signedIn.status).toBe(200);
      expect(JSON.stringify(await signedIn.clone().json())).not.toContain(password);
      expect(SignInResponseSchema.parse(await signedIn.json()).user.email).toBe(DEMO.email);
      const me = await asUser(server, cookieOf(signedIn), 'GET', '/api/auth/me');
      expect(((await me.json()) as { workspaces: { organizationId: string }[] }).workspaces).toEqual([
        expect.objectContaining({ organizationId: DEMO.organizationId }),
      ]);
    });

    it('a demo account cannot create a workspace', async () => {
      const response = await asUser(server, demoOwner, 'POST', '/api/workspaces', { name: 'Escape' });
      expect(response.status).toBe(403);
      expect(ErrorResponseSchema.parse(await response.json()).error.message).toContain('demo');
      expect(
        server.repos.workspaces.listForUser(server.repos.users.findByEmail(DEMO.email)!.id),
      ).toHaveLength(1);
    });

    it('a demo account cannot choose an agent other than the demo agent', async () => {
      const path = `/api/workspaces/${DEMO.organizationId}/agent`;
      for (const body of [
        { agent: 'codex' },
        { agent: 'claude-code' },
        { agent: 'command', commandName: 'x' },
      ]) {
        const response = await asUser(server, demoOwner, 'PUT', path, body);
        expect(response.status, JSON.stringify(body)).toBe(403);
      }
      const demo = await asUser(server, demoOwner, 'PUT', path, { agent: 'demo' });
      expect(demo.status).toBe(200);
      expect(await demo.json()).toMatchObject({ settings: { agent: 'demo' }, source: 'workspace' });
    });

    it('a demo account cannot create accounts', async () => {
      const members = `/api/workspaces/${DEMO.organizationId}/members`;
      const created = await asUser(server, demoOwner, 'POST', members, {
        email: 'new@example.test',
        name: 'New',
        password: PASSWORD,
      });
      expect(created.status).toBe(403);
      expect(server.repos.users.findByEmail('new@example.test')).toBeNull();
    });

    it('no one can take a demo account into another workspace', async () => {
      const real = await seedWorkspace(server, 'real');
      const taken = await asUser(
        server,
        real.user.cookie,
        'POST',
        `/api/workspaces/${real.organizationId}/members`,
        {
          email: 'grace@sessiondesk.local',
        },
      );
      expect(taken.status).toBe(403);
      expect(server.repos.workspaces.members(real.organizationId).map((m) => m.email)).not.toContain(
        'grace@sessiondesk.local',
      );
    });
  },
);
