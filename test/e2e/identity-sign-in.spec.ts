import { randomBytes } from 'node:crypto';
import type { Page } from '@playwright/test';
import { createAccounts } from '../../src-main/accounts/accounts.js';
import { systemClock } from '../../src-main/clock.js';
import { runCli } from '../helpers/cli.js';
import { newClientId, startTestProvider, type TestProvider } from '../helpers/identity-provider.js';
import { PASSWORD } from '../helpers/server.js';
import { opensslTool } from '../helpers/tools.js';
import { newPlace, removePlace, seedPlace, servePlace, storeOptions, type Place } from './backend.js';
import { expect, test } from './fixtures.js';
import { requireTools } from './require-tools.js';

/**
 * Signing in through the identity provider in Chromium: the dashboard's button, the provider's
 * own login form (oidc-provider over HTTPS, a CA made for the test), and back. The server
 * trusts the provider's CA through NODE_EXTRA_CA_CERTS; the browser is told to accept it.
 */

test.use({ ignoreHTTPSErrors: true });

const PEOPLE = {
  ivy: { email: 'ivy@invited.test', email_verified: true, name: 'Ivy Invited' },
  uma: { email: 'uma@elsewhere.test', email_verified: true, name: 'Uma Uninvited' },
  vic: { email: 'vic@invited.test', email_verified: false, name: 'Vic Unverified' },
  dan: { email: 'dan@allowed.test', email_verified: true, name: 'Dan Allowed' },
};

let idp: TestProvider | undefined;
test.beforeAll(async () => {
  requireTools(opensslTool());
  idp = await startTestProvider({ people: PEOPLE });
});
test.afterAll(async () => idp?.stop());

/**
 * A fresh place with Ada owning "Acme" and the emails `invite` invited to it, served with the
 * provider (and `args`); its client registered at the provider.
 */
async function serveWithProvider(invite: string[], args: string[] = []) {
  const provider = idp!;
  const place = await newPlace();
  await seedPlace(place, async (storage) => {
    const accounts = createAccounts(storage, systemClock);
    await accounts.createUser({ email: 'ada@example.test', name: 'Ada Lovelace', password: PASSWORD });
    const { organizationId } = await accounts.createWorkspace({
      name: 'Acme',
      ownerEmail: 'ada@example.test',
    });
    for (const email of invite) await accounts.addMemberOrInvite({ organizationId, email });
  });
  const clientId = newClientId();
  const secret = randomBytes(16).toString('hex');
  const server = await servePlace(
    place,
    ['--log-level', 'warn', '--oidc-issuer', provider.issuer, '--oidc-client-id', clientId, ...args],
    { NODE_EXTRA_CA_CERTS: provider.caFile, SESSIONDESK_OIDC_CLIENT_SECRET: secret },
  );
  await provider.registerClient({
    client_id: clientId,
    client_secret: secret,
    redirect_uris: [`${server.url}/api/auth/oidc/callback`],
  });
  return {
    server,
    place,
    async stop() {
      await server.stop();
      removePlace(place);
    },
  };
}

/** From the dashboard's sign-in page, through the provider's login form, as `login`. */
async function signInWithProvider(page: Page, url: string, login: string) {
  await page.goto(url);
  await page.getByRole('link', { name: `Sign in with ${new URL(idp!.issuer).host}` }).click();
  // The provider's own page, on its own origin.
  await expect(page).toHaveURL(new RegExp(`^${idp!.issuer}/interaction/`, 'u'));
  await page.getByPlaceholder('Enter any login').fill(login);
  await page.getByPlaceholder('and password').fill('anything');
  await page.getByRole('button', { name: 'Sign-in' }).click();
}

async function userEmails(place: Place): Promise<string[]> {
  const listed = await runCli(['user', 'list', '--json', ...storeOptions(place)]);
  expect(listed.code, listed.stderr).toBe(0);
  return (JSON.parse(listed.stdout) as { email: string }[]).map((u) => u.email).sort();
}

test('an invited email signs in through the provider and lands in its workspace', async ({ page }) => {
  const served = await serveWithProvider(['ivy@invited.test']);
  try {
    // The sign-in page offers both ways this server has.
    await page.goto(served.server.url);
    await expect(page.getByLabel('Email')).toBeVisible();
    await signInWithProvider(page, served.server.url, 'ivy');
    await expect(page.getByRole('heading', { name: 'Sessions', level: 1 })).toBeVisible();
    await expect(page).toHaveURL(`${served.server.url}/`);
    await page.getByRole('link', { name: 'Members' }).click();
    const members = page.getByRole('list', { name: 'Members of Acme' });
    await expect(members).toContainText('Ivy Invited');
    await expect(members.getByRole('listitem').filter({ hasText: 'Ivy Invited' })).toContainText('(you)');
    // Reloaded, the page is still signed in (the cookie is sent on a navigation of its own).
    await page.reload();
    await expect(members).toContainText('Ivy Invited');
  } finally {
    await served.stop();
  }
});

test('an email nobody invited is told to ask an owner, and no account is made', async ({ page }) => {
  const served = await serveWithProvider(['ivy@invited.test']);
  try {
    await signInWithProvider(page, served.server.url, 'uma');
    await expect(page.getByRole('alert')).toContainText(
      'Your email has no account on this server and was not invited. Ask an owner of this server to invite it',
    );
    await expect(page.getByRole('heading', { name: 'Sign in to Session Desk' })).toBeVisible();
    // The reason is not left in the address to be shown again.
    await expect(page).toHaveURL(`${served.server.url}/`);
    expect(await userEmails(served.place)).toEqual(['ada@example.test']);
  } finally {
    await served.stop();
  }
});

test('an email the provider did not verify is refused, even invited', async ({ page }) => {
  const served = await serveWithProvider(['vic@invited.test']);
  try {
    await signInWithProvider(page, served.server.url, 'vic');
    await expect(page.getByRole('alert')).toContainText(
      'Your identity provider did not say your email address is verified',
    );
    expect(await userEmails(served.place)).toEqual(['ada@example.test']);
  } finally {
    await served.stop();
  }
});

test('an email of an allowed domain gets an account, in no workspace yet', async ({ page }) => {
  const served = await serveWithProvider([], ['--oidc-allowed-domains', 'allowed.test']);
  try {
    await signInWithProvider(page, served.server.url, 'dan');
    await expect(page.getByText('You are not in a workspace yet')).toBeVisible();
    expect(await userEmails(served.place)).toEqual(['ada@example.test', 'dan@allowed.test']);
  } finally {
    await served.stop();
  }
});

test('with password sign-in off the page offers the provider alone; an owner invites from Members', async ({
  page,
}) => {
  const served = await serveWithProvider([], ['--password-sign-in', 'off']);
  try {
    await page.goto(served.server.url);
    const provider = page.getByRole('link', { name: `Sign in with ${new URL(idp!.issuer).host}` });
    await expect(provider).toBeVisible();
    await expect(page.getByLabel('Email')).toHaveCount(0);
    await expect(page.getByRole('button', { name: 'Sign in' })).toHaveCount(0);

    // Ada signs in through the provider too: her email is verified there, and has her account.
    idp!.people.set('ada', { email: 'ada@example.test', email_verified: true, name: 'Ada at the provider' });
    await signInWithProvider(page, served.server.url, 'ada');
    await page.getByRole('link', { name: 'Members' }).click();
    await expect(page.getByLabel('Create a new local account for this person')).toHaveCount(0);
    await page.getByLabel('Email').fill('ivy@invited.test');
    await page.getByRole('button', { name: 'Add member' }).click();
    await expect(page.getByRole('status').filter({ hasText: 'is invited' })).toContainText(
      'ivy@invited.test is invited: they join Acme when they first sign in.',
    );
    const invited = page.getByRole('list', { name: 'Invited to Acme' });
    await expect(invited).toContainText('ivy@invited.test');
    await expect(invited).toContainText('Invited by Ada Lovelace');
    await page.getByRole('button', { name: 'Withdraw the invitation of ivy@invited.test' }).click();
    await page.getByRole('button', { name: 'Withdraw invitation' }).click();
    await expect(invited).toHaveCount(0);
  } finally {
    await served.stop();
  }
});
