import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DECOY_HASH, hashPassword, verifyPassword } from '../../src-main/accounts/secrets.js';
import { PASSWORD } from '../helpers/server.js';
import { cliEmail, seedOwner, useSandbox } from '../helpers/cli-extra.js';

const sandbox = useSandbox();
const MiB = 1024 * 1024;

/** A field of /proc/PID/status, in bytes. */
function status(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`, 'u').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match?.[1]) throw new Error(`no ${field} for ${pid}`);
  return Number(match[1]) * 1024;
}

describe('checking passwords', () => {
  it('the decoy an unknown email is checked against has the parameters of a new hash', async () => {
    const parameters = (hash: string) => hash.split('$').slice(0, 4);
    expect(parameters(DECOY_HASH)).toEqual(parameters(await hashPassword('a new password')));
    expect(await verifyPassword('anything', null)).toBe(false);
  });

  it('sign-ins arriving together take the memory of one scrypt (128 MiB), not one each', async () => {
    const dataDir = sandbox.dataDir();
    const { email } = await seedOwner(dataDir);
    const serve = await sandbox.serve(dataDir);
    const pid = serve.child.pid as number;
    // Linux's peak resident size since this write (`5` resets VmHWM to the current size).
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    const before = status(pid, 'VmRSS');
    const signIn = (who: string, password: string) =>
      fetch(`${serve.url}/api/auth/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: serve.url },
        body: JSON.stringify({ email: who, password }),
      }).then((response) => response.status);
    // The first sign-in of the server among them, an unknown email and a wrong password.
    const statuses = await Promise.all([
      signIn(email, PASSWORD),
      signIn(email, PASSWORD),
      signIn(cliEmail('nobody'), PASSWORD),
      signIn(email, 'not the password'),
    ]);
    expect(statuses).toEqual([200, 200, 401, 401]);
    const grew = status(pid, 'VmHWM') - before;
    // One scrypt at a time holds 128 MiB; two at once would be 256 MiB.
    expect(grew / MiB).toBeGreaterThan(100);
    expect(grew / MiB).toBeLessThan(230);
  }, 60_000);
});
