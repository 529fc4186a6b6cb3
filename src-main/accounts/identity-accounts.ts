import { EmailSchema, noControl } from '../../src-shared/accounts.js';
import type { Clock } from '../clock.js';
import type { Repos, Storage } from '../store/storage.js';
import { acceptInvitations } from './accounts.js';
import { newId, NO_PASSWORD } from './secrets.js';

/**
 * Who a person signing in through the identity provider is here, the one rule of it:
 *
 * 1. An identity (issuer and subject) linked to an account signs in as that account, whatever
 *    email it has now: a provider's subject never changes, an email may.
 * 2. Otherwise only a verified email (`email_verified: true`) counts. It signs in as the account
 *    with that email, and links the identity to it, unless that account is linked to another
 *    identity at the same provider (an email given to someone else there).
 * 3. An email without an account gets one only when an owner invited it or its domain is
 *    allowed (`--oidc-allowed-domains`): no password, the token's name (else the email's local
 *    part), a member of the workspaces that invited it. Anyone else is refused, and nothing is
 *    made.
 */

export interface Identity {
  issuer: string;
  subject: string;
  email?: string;
  emailVerified: boolean;
  name?: string;
}

export type IdentityOutcome =
  | { signedIn: true; userId: string; email: string; created: boolean; joined: string[] }
  | { signedIn: false; reason: 'email_unverified' | 'not_invited' | 'linked_elsewhere'; email?: string };

const NAME_MAX = 200;

/** The name an account made at a first sign-in gets: the token's, cleaned, else the email's local part. */
function accountName(identity: Identity, email: string): string {
  const given = [...(identity.name ?? '')].filter(noControl).join('').trim().slice(0, NAME_MAX).trim();
  return given || (email.split('@')[0] ?? email);
}

/** `a.com` allows `ann@a.com`, not `ann@sub.a.com`: each domain is named on its own. */
function domainAllowed(email: string, allowedDomains: readonly string[]): boolean {
  const domain = email.slice(email.lastIndexOf('@') + 1);
  return allowedDomains.includes(domain);
}

export function createIdentityAccounts(
  storage: Storage,
  clock: Clock,
  policy: { allowedDomains: readonly string[] },
) {
  async function signInLinked(tx: Repos, userId: string, at: string): Promise<IdentityOutcome | null> {
    const user = await tx.users.findById(userId);
    if (!user) return null;
    return {
      signedIn: true,
      userId,
      email: user.email,
      created: false,
      joined: await acceptInvitations(tx, user, at),
    };
  }

  return {
    /** Signs the identity in as its account, making it when the rules above allow; one write. */
    signIn(identity: Identity): Promise<IdentityOutcome> {
      const at = clock.now().toISOString();
      const parsed = EmailSchema.safeParse(identity.email ?? '');
      const email = parsed.success ? parsed.data : undefined;
      return storage.write(async (tx) => {
        const linked = await tx.identities.find(identity.issuer, identity.subject);
        if (linked) {
          const outcome = await signInLinked(tx, linked.userId, at);
          if (outcome) return outcome;
        }
        if (email === undefined || !identity.emailVerified) {
          return { signedIn: false, reason: 'email_unverified', ...(email ? { email } : {}) };
        }
        const link = { issuer: identity.issuer, subject: identity.subject, createdAt: at };
        const existing = await tx.users.findByEmail(email);
        if (existing) {
          if (await tx.identities.forUser(existing.id, identity.issuer)) {
            return { signedIn: false, reason: 'linked_elsewhere', email };
          }
          await tx.identities.insert({ ...link, userId: existing.id });
          return (await signInLinked(tx, existing.id, at))!;
        }
        const invited = (await tx.invitations.forEmail(email)).length > 0;
        if (!invited && !domainAllowed(email, policy.allowedDomains)) {
          return { signedIn: false, reason: 'not_invited', email };
        }
        const user = {
          id: newId('user'),
          email,
          name: accountName(identity, email),
          passwordHash: NO_PASSWORD,
          createdAt: at,
        };
        await tx.users.insert(user);
        await tx.identities.insert({ ...link, userId: user.id });
        return {
          signedIn: true,
          userId: user.id,
          email,
          created: true,
          joined: await acceptInvitations(tx, user, at),
        };
      });
    },
  };
}
export type IdentityAccounts = ReturnType<typeof createIdentityAccounts>;
