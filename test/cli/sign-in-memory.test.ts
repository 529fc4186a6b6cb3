import { describe, expect, it } from 'vitest';
import { DECOY_HASH, hashPassword, verifyPassword } from '../../src-main/accounts/secrets.js';
import { PASSWORD } from '../helpers/server.js';
import { cliEmail, seedOwner, useSandbox } from '../helpers/cli-extra.js';
import { until } from '../helpers/until.js';

const sandbox = useSandbox();

describe('checking passwords', () => {
  it('the decoy an unknown email is checked against has the parameters of a new hash', async () => {
    const parameters = (hash: string) => hash.split('$').slice(0, 4);
    expect(parameters(DECOY_HASH)).toEqual(parameters(await hashPassword('a new password')));
    expect(await verifyPassword('anything', null)).toBe(false);
  });

  // Each scrypt holds 128 MiB while it runs: sign-ins arriving together must take their turn.
  // What that saves in memory is measured by bench/sign-in-memory.ts.
  it("sign-ins arriving together check passwords one at a time: no scrypt starts before the last one's end", async () => {
    const dataDir = sandbox.dataDir();
    const { email } = await seedOwner(dataDir);
    const serve = await sandbox.serve(dataDir, ['--log-format', 'json', '--log-level', 'debug']);
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
    // The server's own account of each check, in the order it happened (its one thread writes
    // the log): an end always comes before the next start.
    const checks = () =>
      serve
        .stderr()
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => (JSON.parse(line) as { event?: string }).event)
        .filter((event) => event?.startsWith('password-check.'));
    expect(await until(checks, (events) => events.length >= 8)).toEqual(
      Array.from({ length: 4 }, () => ['password-check.started', 'password-check.ended']).flat(),
    );
  }, 60_000);
});
