// Mutations of the CLIs' recorded session files (test/fixtures/history/) for fuzzing the
// importer: what another program, or a CLI version not seen yet, could write where a CLI writes
// times, ids, counts and text.
import fc from 'fast-check';

export type Mutation =
  /** Every time field of the file (`timestamp`, `startTime`, `lastUpdated`) set to one value. */
  | { kind: 'times'; value: unknown }
  /** One value anywhere in a record (found by `pick` among its paths) replaced. */
  | { kind: 'value'; record: number; pick: number; value: unknown }
  /** One id-like field (`id`, `sessionId`, `call_id`, …) of a record replaced. */
  | { kind: 'id'; record: number; pick: number; value: unknown }
  /** Bytes that are not UTF-8 put into a record's text. */
  | { kind: 'bytes'; record: number; at: number; bytes: readonly number[] }
  /** A record cut short, as a CLI killed while writing leaves it. */
  | { kind: 'truncate'; record: number; at: number }
  /** A record written twice. */
  | { kind: 'repeat'; record: number };

const ID_KEYS = new Set([
  'id',
  'sessionId',
  'session_id',
  'call_id',
  'tool_use_id',
  'toolUseId',
  'uuid',
  'parentUuid',
  'promptId',
  // Qwen Code's tool result names its call again.
  'callId',
]);

/** Times as programs write them, and as they should never be. */
const time: fc.Arbitrary<unknown> = fc.oneof(
  fc
    .tuple(
      fc.date({
        min: new Date('1899-01-01T00:00:00Z'),
        max: new Date('2301-01-01T00:00:00Z'),
        noInvalidDate: true,
      }),
      fc.constantFrom(
        'iso',
        'micro',
        'nano',
        'plain',
        'offset',
        'compact',
        'lower',
        'space',
        'date',
        'epoch',
      ),
    )
    .map(([date, form]) => {
      const iso = date.toISOString();
      switch (form) {
        case 'micro':
          return iso.replace('Z', '088Z');
        case 'nano':
          return iso.replace('Z', '088123Z');
        case 'plain':
          return iso.replace(/\.\d+Z$/u, 'Z');
        case 'offset':
          return iso.replace('Z', '+02:00');
        case 'compact':
          return iso.replace('Z', '-0530');
        case 'lower':
          return iso.toLowerCase();
        case 'space':
          return iso.replace('T', ' ');
        case 'date':
          return iso.slice(0, 10);
        case 'epoch':
          return date.getTime();
        default:
          return iso;
      }
    }),
  fc.constantFrom(
    '',
    'yesterday',
    '0000-00-00T00:00:00Z',
    '2026-02-30T10:00:00Z',
    '2026-11-26T24:00:00Z',
    '2026-11-26T12:09:04.217088',
    '+275760-09-13T00:00:00.000Z',
    '9999-12-31T23:59:59.999Z',
    'Thu, 26 Nov 2026 12:09:04 GMT',
    null,
    true,
    [],
    {},
  ),
);

/** Values of every type and size, the awkward ones more often than chance would give them. */
const value: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(
    -1,
    1.5,
    1e308,
    -1e308,
    2 ** 53 + 1,
    0,
    '',
    ' ',
    '\u0000',
    '\u001b[31m',
    '\ud800',
    null,
    [],
    {},
  ),
  fc.constantFrom(1_000, 100_000, 1_000_000).map((n) => 'x'.repeat(n)),
);

const id: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom(
    '',
    '--help',
    '-rf',
    '../../etc/passwd',
    'ses_aaaaaaaaaaaaaaaaaaaaaa',
    'a'.repeat(5000),
    '😀',
    7,
    null,
  ),
);

const record = fc.nat({ max: 1000 });

export const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('times' as const), value: time }),
  fc.record({ kind: fc.constant('value' as const), record, pick: fc.nat(), value }),
  fc.record({ kind: fc.constant('id' as const), record, pick: fc.nat(), value: id }),
  fc.record({
    kind: fc.constant('bytes' as const),
    record,
    at: fc.nat(),
    // A lone continuation byte, a truncated sequence, an overlong form, an encoded surrogate.
    bytes: fc.constantFrom(
      [0x80],
      [0xc3],
      [0xc0, 0xaf],
      [0xed, 0xa0, 0x80],
      [0xff, 0xfe],
      [0xf8, 0x88, 0x80],
    ),
  }),
  fc.record({ kind: fc.constant('truncate' as const), record, at: fc.nat() }),
  fc.record({ kind: fc.constant('repeat' as const), record }),
);

/** Every path to a value in `node` (objects and arrays included), with the keys that lead there. */
function paths(node: unknown, at: (string | number)[] = []): (string | number)[][] {
  const here = at.length > 0 ? [at] : [];
  if (Array.isArray(node)) return [...here, ...node.flatMap((child, i) => paths(child, [...at, i]))];
  if (typeof node === 'object' && node !== null)
    return [...here, ...Object.entries(node).flatMap(([key, child]) => paths(child, [...at, key]))];
  return here;
}

function setAt(root: unknown, path: (string | number)[], replacement: unknown): void {
  let node = root as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  node[path.at(-1)!] = replacement;
}

const TIME_KEYS = new Set(['timestamp', 'startTime', 'lastUpdated']);

/**
 * The file's bytes with the mutations applied. Its records are its lines (a JSONL file) or its
 * whole text (a chat document); a record that is not JSON is left to the byte mutations.
 */
export function mutate(original: Buffer, document: boolean, mutations: Mutation[]): Buffer {
  const text = original.toString('utf8');
  const records: Buffer[] = (document ? [text] : text.split('\n')).map((r) => Buffer.from(r, 'utf8'));
  const index = (n: number) => n % records.length;
  const withJson = (n: number, change: (json: unknown) => void) => {
    const i = index(n);
    let json: unknown;
    try {
      json = JSON.parse(records[i]!.toString('utf8'));
    } catch {
      return;
    }
    change(json);
    records[i] = Buffer.from(document ? JSON.stringify(json, null, 2) : JSON.stringify(json), 'utf8');
  };
  for (const mutation of mutations) {
    switch (mutation.kind) {
      case 'times':
        for (let i = 0; i < records.length; i += 1)
          withJson(i, (json) => {
            for (const path of paths(json))
              if (TIME_KEYS.has(String(path.at(-1)))) setAt(json, path, mutation.value);
          });
        break;
      case 'value':
      case 'id':
        withJson(mutation.record, (json) => {
          const all = paths(json).filter((p) => mutation.kind === 'value' || ID_KEYS.has(String(p.at(-1))));
          if (all.length > 0) setAt(json, all[mutation.pick % all.length]!, mutation.value);
        });
        break;
      case 'bytes': {
        const i = index(mutation.record);
        const at = mutation.at % (records[i]!.length + 1);
        records[i] = Buffer.concat([
          records[i]!.subarray(0, at),
          Buffer.from(mutation.bytes),
          records[i]!.subarray(at),
        ]);
        break;
      }
      case 'truncate': {
        const i = index(mutation.record);
        records[i] = records[i]!.subarray(0, mutation.at % (records[i]!.length + 1));
        break;
      }
      case 'repeat': {
        const i = index(mutation.record);
        records.splice(i, 0, records[i]!);
        break;
      }
    }
  }
  return Buffer.concat(records.flatMap((r, i) => (i === 0 ? [r] : [Buffer.from('\n'), r])));
}
