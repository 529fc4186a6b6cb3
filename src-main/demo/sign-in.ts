import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { hashPassword } from '../accounts/secrets.js';
import { realFiles, writeFileAtomically } from '../store/file-layer.js';
import type { Storage } from '../store/storage.js';
import type { Store } from '../store/store.js';

/**
 * The demo owner's sign-in: a random password made when the demo is created, kept in the
 * data directory (readable only by this user) so that `serve --demo` can print it at every
 * start and the sign-in page of a demo data directory can show it.
 */
export const DEMO_SIGN_IN_FILE = 'demo-sign-in.json';
export const DEMO_EMAIL = 'demo@sessiondesk.local';
const DEMO_PEOPLE = [
  DEMO_EMAIL,
  'grace@sessiondesk.local',
  'linus@sessiondesk.local',
  'margaret@sessiondesk.local',
];

const SignInSchema = z.object({ email: z.string(), password: z.string() });
export type DemoSignIn = z.infer<typeof SignInSchema>;

export function newDemoPassword(): string {
  // 96 random bits, in groups a person can copy or type.
  return (randomBytes(12).toString('base64url').match(/.{4}/gu) ?? []).join('-');
}

export function readDemoSignIn(dataDir: string): DemoSignIn | null {
  try {
    return SignInSchema.parse(JSON.parse(readFileSync(join(dataDir, DEMO_SIGN_IN_FILE), 'utf8')));
  } catch {
    return null;
  }
}

/** Gives the demo owner a new random password, durably, and records it for display. */
export async function setDemoPassword(store: Store, storage: Storage): Promise<DemoSignIn> {
  const password = newDemoPassword();
  const hash = await hashPassword(password);
  const owner = await storage.repos.users.findByEmail(DEMO_EMAIL);
  if (owner) await storage.write((tx) => tx.users.setPasswordHash(owner.id, hash));
  const signIn = { email: DEMO_EMAIL, password };
  await writeFileAtomically(
    realFiles,
    join(store.dataDir, DEMO_SIGN_IN_FILE),
    Buffer.from(`${JSON.stringify(signIn, null, 2)}\n`),
  );
  return signIn;
}

/**
 * A demo made by an earlier version has accounts with the published password: they get
 * random ones (the owner's recorded for display, the others' never known) before the
 * server answers anyone.
 */
export async function retireDemoPublishedPassword(store: Store, storage: Storage): Promise<boolean> {
  if (readDemoSignIn(store.dataDir) !== null) return false;
  const found = await Promise.all(DEMO_PEOPLE.map((email) => storage.repos.users.findByEmail(email)));
  const people = found.filter((u) => u !== null);
  if (people.length === 0) return false;
  for (const person of people) {
    if (person.email === DEMO_EMAIL) continue;
    const hash = await hashPassword(newDemoPassword());
    await storage.write((tx) => tx.users.setPasswordHash(person.id, hash));
  }
  await setDemoPassword(store, storage);
  // Whoever signed in with the published password is signed out.
  await storage.write(async (tx) => {
    for (const person of people) await tx.authSessions.deleteForUser(person.id);
  });
  return true;
}
