import postgres, { type Sql } from 'postgres';

/** The oldest PostgreSQL the team server runs on: the one its tests and CI run against. */
export const MIN_SERVER_VERSION = 15;

/** A database URL that is not one: said before anything connects. */
export class DatabaseUrlError extends Error {}

/**
 * A database that could not be reached or refused us, said for the person who gave the URL:
 * where, what went wrong, what to check. The driver's own error is kept as `cause`, for logs.
 */
export class DatabaseUnreachableError extends Error {}

/** Where a URL points, as a person would name it; never its password. */
export interface DatabaseTarget {
  host: string;
  port: number;
  database: string;
  user: string;
}

const EXAMPLE_URL = 'postgres://sessiondesk@db.example.com:5432/sessiondesk';

export function parseDatabaseUrl(url: string): DatabaseTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DatabaseUrlError(`The database URL is not a URL. Give one like ${EXAMPLE_URL}.`);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new DatabaseUrlError(
      `The database URL must start with postgres:// (it starts with ${parsed.protocol}//). Give one like ${EXAMPLE_URL}.`,
    );
  }
  const user = decodeURIComponent(parsed.username) || (process.env.PGUSER ?? process.env.USER ?? 'postgres');
  return {
    host: parsed.hostname.replace(/^\[(.*)\]$/, '$1') || 'localhost',
    port: parsed.port ? Number(parsed.port) : 5432,
    database: decodeURIComponent(parsed.pathname.slice(1)) || user,
    user,
  };
}

export interface ConnectOptions {
  /** Connections the pool may open. */
  max?: number;
  /** Keep each connection for as long as it lives (never rotated after 30 to 60 minutes). */
  keepConnections?: boolean;
  /** How long to wait for a server that does not answer, in seconds. */
  connectTimeoutSeconds?: number;
  /** Settings of every connection of the pool (`statement_timeout`, …), given as it connects. */
  settings?: Record<string, string>;
}

/**
 * Opens a pool on `url` and checks, with one query, that the database answers and is recent
 * enough: a server started on a wrong URL stops at once with a sentence, not at its first
 * request with a stack.
 */
export async function connect(url: string, options: ConnectOptions = {}): Promise<Sql> {
  const target = parseDatabaseUrl(url);
  const timeout = options.connectTimeoutSeconds ?? 10;
  const sql = postgres(url, {
    max: options.max ?? 10,
    connect_timeout: timeout,
    ...(options.keepConnections ? { max_lifetime: null, idle_timeout: 0 } : {}),
    // "relation already exists, skipping" and the like are not news to a person.
    onnotice: () => undefined,
    // No JIT compilation: it pays off for a long analytical query, and a statement here takes
    // milliseconds. A search's generic plan costs past jit_above_cost, and compiling it took
    // 23 of a common search's 24 ms (bench/RESULTS.md).
    connection: { application_name: 'sessiondesk', jit: 'off', ...options.settings },
    // BIGINT (counts, byte offsets, tokens) as a number, as sql.js answers it: every such value
    // the store keeps is far below 2^53.
    types: {
      bigint: { to: 20, from: [20], serialize: (value: number) => String(value), parse: Number },
      // PostgreSQL's text cannot hold U+0000, which a person's or an agent's text may carry
      // (sql.js keeps it): it is kept as U+FFFD rather than failing the whole write. The
      // transcripts' bytes (BYTEA, the JSON escaping it) keep it exactly.
      text: {
        to: 25,
        from: [25],
        serialize: (value: string) => value.replaceAll('\u0000', '\uFFFD'),
        parse: String,
      },
    },
  });
  let version: number;
  try {
    const [row] = await sql<{ version: string }[]>`SELECT current_setting('server_version_num') AS version`;
    version = Number(row?.version ?? 0);
  } catch (err) {
    await sql.end({ timeout: 0 }).catch(() => undefined);
    throw new DatabaseUnreachableError(describeFailure(target, err, timeout), { cause: err });
  }
  if (version < MIN_SERVER_VERSION * 10_000) {
    await sql.end({ timeout: 1 });
    throw new DatabaseUnreachableError(
      `${where(target)} runs PostgreSQL ${Math.floor(version / 10_000)}; Session Desk needs ${MIN_SERVER_VERSION} or later.`,
    );
  }
  return sql;
}

function where(t: DatabaseTarget): string {
  return `The PostgreSQL database "${t.database}" at ${t.host}:${t.port}`;
}

/** What went wrong and what to check, by the error's code (a system one, or SQLSTATE). */
function describeFailure(t: DatabaseTarget, err: unknown, timeoutSeconds: number): string {
  const code = (err as { code?: unknown }).code;
  const url = 'the URL given with --database or SESSIONDESK_DATABASE_URL';
  const head = `Cannot connect to the PostgreSQL database "${t.database}" at ${t.host}:${t.port} as "${t.user}"`;
  switch (code) {
    case 'ECONNREFUSED':
      return (
        `${head}: nothing is listening there (connection refused). Check that PostgreSQL is running ` +
        `(pg_isready -h ${t.host} -p ${t.port}) and that ${url} names the right host and port.`
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${head}: the host name "${t.host}" is not known. Check its spelling in ${url}.`;
    case 'CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return (
        `${head}: no answer within ${timeoutSeconds} s. Check that the host is up and that no firewall ` +
        `drops connections to port ${t.port}.`
      );
    case '28P01':
    case '28000':
      return (
        `${head}: the server refused the user "${t.user}" (wrong password, or no pg_hba.conf line lets ` +
        `this user in from this machine). Check the user and password in ${url}.`
      );
    case '3D000':
      return `${head}: there is no such database. Create it (createdb -h ${t.host} -p ${t.port} ${t.database}) or correct ${url}.`;
    case '57P03':
      return `${head}: the server is starting up or shutting down. Try again in a moment.`;
    default: {
      const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
      return `${head}: ${typeof code === 'string' ? `${code}: ` : ''}${reason}.`;
    }
  }
}

/** The driver's codes for a connection that broke, or could not be made or kept. */
const CONNECTION_LOST = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
]);

/**
 * Whether an error means the database cannot be reached now (it stopped, restarted, or the
 * network went), not that a query was wrong: a server answers 503 and the next request, on a
 * new connection, may succeed. SQLSTATE class 08 (connection exception), and 57P01 to 57P03
 * (the server shutting down, crashed, or still starting) and 53300 (too many connections).
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return CONNECTION_LOST.has(code) || code.startsWith('08') || /^57P0[123]$/u.test(code) || code === '53300';
}
