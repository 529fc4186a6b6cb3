/** A team server (`serve --database`) as its tests reach it: requests, and its first-run setup. */
import { expect } from 'vitest';
import type { ServeProcess } from './cli.js';
import { PASSWORD } from './cli-extra.js';
import { launchCookie } from './server.js';

const cookieOf = (response: Response) => (response.headers.get('set-cookie') ?? '').split(';')[0]!;

export async function send(
  url: string,
  path: string,
  init: { method?: string; cookie?: string; key?: string; body?: unknown },
) {
  return fetch(`${url}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      origin: url,
      ...(init.cookie ? { cookie: init.cookie } : {}),
      ...(init.key ? { 'x-api-key': init.key } : {}),
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
}

/** First run on an empty database: the owner and a first workspace, through the dashboard's setup. */
export async function firstOwner(serve: ServeProcess): Promise<{ cookie: string; organizationId: string }> {
  const setup = await send(serve.url, '/api/setup', {
    method: 'POST',
    cookie: await launchCookie(serve),
    body: { email: 'lead@example.com', name: 'Lead', password: PASSWORD, workspaceName: 'Team' },
  });
  expect(setup.status, await setup.clone().text()).toBe(201);
  const { organizationId } = ((await setup.json()) as { workspace: { organizationId: string } }).workspace;
  return { cookie: cookieOf(setup), organizationId };
}
