import type { Repos } from '../store/storage.js';

/**
 * The demo's fixed ids and sign-in email. Its password is random, made when the demo is
 * created (an account with a published password would let any local program in).
 */
export const DEMO = {
  organizationId: 'org_demo-workspace-0000001',
  workspaceName: 'Demo workspace (sample data)',
  email: 'demo@sessiondesk.local',
} as const;

export const PEOPLE = [
  { email: DEMO.email, name: 'Demo Owner' },
  { email: 'grace@sessiondesk.local', name: 'Grace Hopper' },
  { email: 'linus@sessiondesk.local', name: 'Linus Torvalds' },
  { email: 'margaret@sessiondesk.local', name: 'Margaret Hamilton' },
];

/** The demo's people's emails: their accounts are never the administrator's. */
export const DEMO_EMAILS: readonly string[] = PEOPLE.map((person) => person.email);

/**
 * The demo's people, whose sign-in the launch token or the printed password gives: they stay
 * in the demo workspace, with the demo agent, and create nothing outside it.
 */
export function isDemoAccount(email: string): boolean {
  return PEOPLE.some((person) => person.email === email.toLowerCase());
}

/**
 * How many accounts exist besides the demo's people. While there are none, first-run setup
 * stays open: exploring the demo must not take away the chance to create one's own account.
 */
export async function ownAccountCount(repos: Repos): Promise<number> {
  const found = await Promise.all(PEOPLE.map((person) => repos.users.findByEmail(person.email)));
  return (await repos.users.count()) - found.filter((user) => user !== null).length;
}
