import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Provider, { type Adapter, type AdapterPayload, type ClientMetadata } from 'oidc-provider';

/**
 * A real OpenID Connect provider for the tests: panva's certified `oidc-provider`, on
 * 127.0.0.1 over HTTPS with a certificate of a CA made for the test (openssl, in a folder of
 * its own). Its people sign in on its development login form (any password) as one of the
 * `people` given, with the claims given; clients are registered once the server under test
 * knows its redirect URI. A process that must trust it is started with
 * `NODE_EXTRA_CA_CERTS=caFile`, as an administrator trusts a private CA.
 */

export interface Person {
  email?: string;
  email_verified?: boolean;
  name?: string;
}

export type Browse = (
  url: string,
  form?: Record<string, string>,
) => Promise<{ status: number; location: string | null; body: string }>;

export interface TestProvider {
  issuer: string;
  /** The test CA's certificate (PEM), for NODE_EXTRA_CA_CERTS. */
  caFile: string;
  ca: string;
  /** Registers a client (a secret one unless `token_endpoint_auth_method: 'none'`). */
  registerClient(metadata: ClientMetadata): Promise<void>;
  /** Adds or changes who can sign in, by the login typed on the provider's form. */
  people: Map<string, Person>;
  /**
   * A browser's visits to the provider: GET, or POST a form, over HTTPS trusting the test CA,
   * the provider's cookies kept between them (and only theirs: a new browser has none).
   */
  browser(): Browse;
  stop(): Promise<void>;
}

/** The provider's key for signing ID tokens (RS256, its default), made for the test. */
function signingKey() {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: 'test', alg: 'RS256', use: 'sig' };
}

/** A CA and a certificate for 127.0.0.1 signed by it, made with openssl in `dir`. */
function makeCertificates(dir: string): { ca: string; key: string; cert: string } {
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  run(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=Session Desk test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  run('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
  writeFileSync(
    join(dir, 'server.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n',
  );
  run(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '2',
    '-extfile',
    'server.ext',
  );
  const read = (name: string) => readFileSync(join(dir, name), 'utf8');
  return { ca: read('ca.pem'), key: read('server.key'), cert: read('server.pem') };
}

/**
 * The provider's storage, in memory and its own (its built-in one is shared by the whole
 * process): tokens, sessions, interactions, and the clients registered with `registerClient`.
 */
function memoryStorage() {
  const records = new Map<string, AdapterPayload>();
  return class MemoryAdapter implements Adapter {
    constructor(readonly model: string) {}
    private key = (id: string) => `${this.model}:${id}`;
    upsert(id: string, payload: AdapterPayload) {
      records.set(this.key(id), payload);
      if (payload.uid) records.set(`${this.model}:uid:${payload.uid}`, payload);
      if (payload.userCode) records.set(`${this.model}:userCode:${payload.userCode}`, payload);
      return Promise.resolve();
    }
    find(id: string) {
      return Promise.resolve(records.get(this.key(id)));
    }
    findByUid(uid: string) {
      return Promise.resolve(records.get(`${this.model}:uid:${uid}`));
    }
    findByUserCode(userCode: string) {
      return Promise.resolve(records.get(`${this.model}:userCode:${userCode}`));
    }
    consume(id: string) {
      const found = records.get(this.key(id));
      if (found) found.consumed = Math.floor(Date.now() / 1000);
      return Promise.resolve();
    }
    destroy(id: string) {
      records.delete(this.key(id));
      return Promise.resolve();
    }
    revokeByGrantId(grantId: string) {
      for (const [key, payload] of records) if (payload.grantId === grantId) records.delete(key);
      return Promise.resolve();
    }
  };
}

export async function startTestProvider(
  options: {
    people?: Record<string, Person>;
    /**
     * True (the provider's default): the ID token of a code flow carries no profile claims,
     * which the client reads from userinfo. False: the ID token carries them.
     */
    conformIdTokenClaims?: boolean;
  } = {},
): Promise<TestProvider> {
  const dir = mkdtempSync(join(tmpdir(), 'sessiondesk-idp-'));
  const { ca, key, cert } = makeCertificates(dir);
  const caFile = join(dir, 'ca.pem');
  const people = new Map(Object.entries(options.people ?? {}));
  const server = createServer({ key, cert });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const Storage = memoryStorage();
  const provider = new Provider(issuer, {
    adapter: Storage,
    async findAccount(_ctx, id) {
      const person = people.get(id);
      if (!person) return undefined;
      return { accountId: id, claims: () => ({ sub: id, ...person }) };
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    jwks: { keys: [signingKey()] },
    ttl: {
      AccessToken: 600,
      AuthorizationCode: 60,
      Grant: 3600,
      IdToken: 600,
      Interaction: 600,
      Session: 3600,
    },
    conformIdTokenClaims: options.conformIdTokenClaims ?? false,
    cookies: { keys: [randomBytes(16).toString('hex')] },
    features: { devInteractions: { enabled: true } },
    // No consent page: the server under test is the provider's own application.
    async loadExistingGrant(ctx) {
      const grantId =
        ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session!.grantIdFor(ctx.oidc.client!.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client!.clientId,
        accountId: ctx.oidc.session!.accountId!,
      });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
  });
  server.on('request', provider.callback());

  const browser = (): Browse => {
    const cookies = new Map<string, string>();
    return (url, form) => browse(cookies, url, form);
  };
  function browse(cookies: Map<string, string>, url: string, form?: Record<string, string>) {
    return new Promise<{ status: number; location: string | null; body: string }>((resolve, reject) => {
      const body = form ? new URLSearchParams(form).toString() : undefined;
      const target = new URL(url);
      const req = httpsRequest(
        target,
        {
          method: form ? 'POST' : 'GET',
          ca,
          headers: {
            cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '),
            ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
          },
        },
        (response) => {
          for (const line of response.headers['set-cookie'] ?? []) {
            const [pair] = line.split(';');
            const eq = pair!.indexOf('=');
            cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
          }
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => {
            const location = response.headers.location;
            resolve({
              status: response.statusCode ?? 0,
              location: location === undefined ? null : new URL(location, target).href,
              body: text,
            });
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  return {
    issuer,
    caFile,
    ca,
    people,
    async registerClient(metadata) {
      await new Storage('Client').upsert(metadata.client_id, {
        grant_types: ['authorization_code'],
        response_types: ['code'],
        ...metadata,
      });
    },
    browser,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A client id no other test's provider uses (the provider's memory store is the process's). */
export function newClientId(name = 'sessiondesk'): string {
  return `${name}-${randomBytes(6).toString('hex')}`;
}
