import { describe, expect, it } from 'vitest';
import { CreateSessionBodySchema } from '../../src-shared/sessions.js';
import { runCli } from '../helpers/cli.js';
import { PASSWORD, seedOwner, signInAt, useSandbox } from '../helpers/cli-extra.js';

const sandbox = useSandbox();

/** Fast demo runs, so that a session's end is in the log within a test's time. */
const QUICK_AGENT = { SESSIONDESK_DEMO_PACE_MS: '5' };

async function createSession(url: string, cookie: string, organizationId: string, prompt: string) {
  const response = await fetch(`${url}/api/sessions`, {
    method: 'POST',
    headers: { cookie, origin: url, 'content-type': 'application/json' },
    body: JSON.stringify(CreateSessionBodySchema.parse({ organizationId, initialMessage: prompt })),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { session: { id: string } }).session.id;
}

async function failSignIn(url: string, email: string) {
  const response = await fetch(`${url}/api/auth/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: url },
    body: JSON.stringify({ email, password: 'not the password' }),
  });
  expect(response.status).toBe(401);
}

const lines = (text: string) => text.split('\n').filter((line) => line !== '');

describe('the log of serve', () => {
  it('by default: one short line per event (start, refusal, failed sign-in, session created and finished)', async () => {
    const dataDir = sandbox.dataDir();
    const owner = await seedOwner(dataDir);
    const serve = await sandbox.serveWithEnv(['--port', '0', '--data-dir', dataDir], QUICK_AGENT);

    expect((await fetch(`${serve.url}/api/sessions`)).status).toBe(401);
    // What every signed-out page load asks first: an answer, not a refusal worth a line.
    expect((await fetch(`${serve.url}/api/auth/me`)).status).toBe(401);
    for (let i = 0; i < 3; i += 1) expect((await fetch(`${serve.url}/api/setup`)).status).toBe(200);
    await failSignIn(serve.url, owner.email);
    const cookie = await signInAt(serve.url, owner.email);
    const prompt = 'Fix the flaky login test without telling anyone';
    const id = await createSession(serve.url, cookie, owner.org, prompt);

    const time = String.raw`\d\d:\d\d:\d\d`;
    await expect
      .poll(() => serve.stderr(), { timeout: 20_000 })
      .toMatch(new RegExp(`^${time} session ${id} completed$`, 'mu'));
    const log = serve.stderr();
    expect(log).toMatch(new RegExp(`^${time} Session Desk \\S+ listening at ${serve.url}$`, 'mu'));
    expect(log).toMatch(
      new RegExp(`^${time} refused GET /api/sessions: 401 Sign in first, or send an API key`, 'mu'),
    );
    expect(log).toMatch(new RegExp(`^${time} sign-in failed for ${owner.email}: wrong password$`, 'mu'));
    expect(log).toMatch(new RegExp(`^${time} session ${id} created by ${owner.email} \\(demo\\)$`, 'mu'));
    // Every line is a short human one; the requests that went well are not told.
    for (const line of lines(log)) expect(line).toMatch(new RegExp(`^${time} \\S`, 'u'));
    expect(log).not.toContain('/api/setup');
    expect(log).not.toContain('/api/auth/me');
    expect(log).not.toContain('{');
    // What a person typed stays out: the prompt, the passwords, the cookie.
    for (const secret of [prompt, PASSWORD, 'not the password', cookie.split('=')[1]!]) {
      expect(log).not.toContain(secret);
    }
    expect(await serve.stop()).toBe(0);
  }, 90_000);

  it('--log-format json: one JSON object per line, with an ISO time; --log-level debug adds every request', async () => {
    const dataDir = sandbox.dataDir();
    const owner = await seedOwner(dataDir);
    const serve = await sandbox.serve(dataDir, ['--log-format', 'json', '--log-level', 'debug']);
    expect((await fetch(`${serve.url}/api/setup`)).status).toBe(200);
    expect((await fetch(`${serve.url}/api/sessions?apiKey=sdk_nonsense`)).status).toBe(401);
    expect((await fetch(`${serve.url}/api/auth/me`)).status).toBe(401);
    await failSignIn(serve.url, owner.email);

    type Line = { time: string; level: string; msg: string; event?: string; url?: string; status?: number };
    const parsed = () => lines(serve.stderr()).map((line) => JSON.parse(line) as Line);
    await expect.poll(() => parsed().filter((l) => l.event === 'request').length).toBeGreaterThanOrEqual(3);
    const all = parsed();
    for (const line of all) {
      expect(line.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/u);
      expect(['debug', 'info', 'warn', 'error']).toContain(line.level);
      expect(typeof line.msg).toBe('string');
    }
    expect(all).toContainEqual(expect.objectContaining({ event: 'server.started', url: serve.url }));
    expect(all).toContainEqual(
      expect.objectContaining({ event: 'request', url: '/api/setup', status: 200, level: 'debug' }),
    );
    expect(all).toContainEqual(
      expect.objectContaining({
        event: 'request.refused',
        url: '/api/sessions?apiKey=[redacted]',
        status: 401,
      }),
    );
    expect(all).toContainEqual(expect.objectContaining({ event: 'sign-in.failed', email: owner.email }));
    // A signed-out GET /api/auth/me is told at debug only, beside every request.
    expect(all).toContainEqual(
      expect.objectContaining({ event: 'request.refused', url: '/api/auth/me', status: 401, level: 'debug' }),
    );
    expect(all.filter((l) => l.url === '/api/auth/me' && l.level !== 'debug')).toEqual([]);
    expect(serve.stderr()).not.toContain('sdk_nonsense');
    expect(serve.stdout()).toContain('as JSON lines');
    expect(await serve.stop()).toBe(0);
  }, 90_000);

  it('refuses a log level or format it does not know, saying which it takes', async () => {
    const dataDir = sandbox.dataDir();
    const format = await runCli(['serve', '--data-dir', dataDir, '--log-format', 'xml']);
    expect(format.code).toBe(2);
    expect(format.stderr).toContain('--log-format must be one of pretty, json, not xml');
    const level = await runCli(['serve', '--data-dir', dataDir, '--log-level', 'verbose']);
    expect(level.code).toBe(2);
    expect(level.stderr).toContain(
      '--log-level must be one of debug, info, warn, error, silent, not verbose',
    );
  }, 30_000);
});
