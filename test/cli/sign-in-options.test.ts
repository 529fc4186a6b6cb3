import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { occupyPort, useSandbox } from '../helpers/cli-extra.js';
import { startTestProvider, type TestProvider } from '../helpers/identity-provider.js';
import { requireTools } from '../helpers/require-tools.js';
import { opensslTool } from '../helpers/tools.js';

/** `serve`'s sign-in options: what is refused before anything opens, and an issuer it cannot use. */

const sandbox = useSandbox();

async function serveFails(args: string[], env: NodeJS.ProcessEnv = {}) {
  return runCli(['serve', '--port', '0', '--data-dir', sandbox.dataDir(), ...args], env);
}

describe("serve's sign-in options", () => {
  it('refuse a client secret on the command line, saying where it goes', async () => {
    const result = await serveFails([
      '--oidc-issuer',
      'https://id.example.test',
      '--oidc-client-id',
      'desk',
      '--oidc-client-secret',
      'hunter2',
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'sessiondesk: there is no --oidc-client-secret: options show in the process list (ps). Put the client secret in the environment variable SESSIONDESK_OIDC_CLIENT_SECRET',
    );
    expect(result.stderr).toContain('Usage: sessiondesk serve');
  });

  it('refuse what cannot work together, each naming the option', async () => {
    const cases: Array<[string[], NodeJS.ProcessEnv, string]> = [
      [
        ['--password-sign-in', 'off'],
        {},
        '--password-sign-in off needs --oidc-issuer: with neither, nobody could sign in',
      ],
      [[], { SESSIONDESK_PASSWORD_SIGN_IN: 'off' }, '--password-sign-in off needs --oidc-issuer'],
      [['--password-sign-in', 'maybe'], {}, '--password-sign-in must be on or off, not "maybe"'],
      [['--oidc-client-id', 'desk'], {}, '--oidc-client-id needs --oidc-issuer'],
      [
        [],
        { SESSIONDESK_OIDC_CLIENT_SECRET: 's3cret' },
        'SESSIONDESK_OIDC_CLIENT_SECRET needs --oidc-issuer',
      ],
      [
        ['--oidc-issuer', 'https://id.example.test'],
        {},
        '--oidc-issuer needs --oidc-client-id (or SESSIONDESK_OIDC_CLIENT_ID)',
      ],
      [
        ['--oidc-issuer', 'http://id.example.test', '--oidc-client-id', 'desk'],
        {},
        `--oidc-issuer must be the provider's https:// issuer URL (no query), not "http://id.example.test"`,
      ],
      [
        [
          '--oidc-issuer',
          'https://id.example.test',
          '--oidc-client-id',
          'desk',
          '--oidc-allowed-domains',
          'a.com,not a domain',
        ],
        {},
        '--oidc-allowed-domains must be domains separated by commas (example.com,example.org), not "a.com,not a domain"',
      ],
    ];
    for (const [args, env, message] of cases) {
      const result = await serveFails(args, env);
      expect({ args, env, code: result.code }).toEqual({ args, env, code: 2 });
      expect(result.stderr, args.join(' ')).toContain(message);
    }
  }, 60_000);

  it('an issuer that cannot be reached is a sentence naming it, exit code 1, and no stack', async () => {
    // A port nothing listens on any more.
    const taken = await occupyPort();
    await taken.close();
    const issuer = `https://127.0.0.1:${taken.port}`;
    const result = await serveFails(['--oidc-issuer', issuer, '--oidc-client-id', 'desk']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `The identity provider ${issuer} cannot be used: it could not be reached: the connection was refused (ECONNREFUSED). Check --oidc-issuer`,
    );
    expect(result.stderr).not.toMatch(/^\s+at /mu);
  });
});

describe(
  'serve with a provider whose certificate this machine does not trust',
  requireTools(opensslTool()),
  () => {
    let idp: TestProvider;
    beforeAll(async () => {
      idp = await startTestProvider();
    });
    afterAll(async () => idp?.stop());

    it('says so and how to trust a private CA; with NODE_EXTRA_CA_CERTS it starts', async () => {
      const untrusted = await serveFails(['--oidc-issuer', idp.issuer, '--oidc-client-id', 'desk']);
      expect(untrusted.code).toBe(1);
      expect(untrusted.stderr).toContain(
        `The identity provider ${idp.issuer} cannot be used: it could not be reached: its certificate is signed by a CA this machine does not trust`,
      );
      expect(untrusted.stderr).toContain('NODE_EXTRA_CA_CERTS=/path/to/ca.pem');

      const serve = await sandbox.serveWithEnv(
        [
          '--port',
          '0',
          '--data-dir',
          sandbox.dataDir(),
          '--oidc-issuer',
          idp.issuer,
          '--oidc-client-id',
          'desk',
        ],
        { NODE_EXTRA_CA_CERTS: idp.caFile },
      );
      const methods = await fetch(`${serve.url}/api/auth/methods`);
      expect(await methods.json()).toEqual({
        password: true,
        teamServer: false,
        identityProvider: { name: new URL(idp.issuer).host, startUrl: '/api/auth/oidc/start' },
      });
    });
  },
);
