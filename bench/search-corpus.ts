import { createAccounts } from '../src-main/accounts/accounts.js';
import { newId } from '../src-main/accounts/secrets.js';
import { silentLogger, systemClock } from '../src-main/clock.js';
import { storageOf } from '../src-main/store/sqljs-storage.js';
import { Store } from '../src-main/store/store.js';
import type { Storage } from '../src-main/store/storage.js';
import type { Message } from '../src-shared/sessions.js';
import { sessionSizes, TextPool } from './corpus.js';
import { randomGenerator } from './seed.js';

/**
 * The corpus of the search benches (bench/search.ts, bench/search-cost-corpus.ts): sessions of
 * Claude-Code-shaped messages written through the product's store, with rare words planted in
 * known messages, and the queries of four kinds asked of it.
 */

const MB = 1024 * 1024;

/** Rare words planted once each in known messages: the targets of the "rare" queries. */
export const RARE = Array.from({ length: 20 }, (_, i) => `zqrare${i}marker`);
/** Found once the last session is indexed: the first index is complete. */
export const LAST_MARKER = 'zqlastsessionmarker';

export class ConversationMaker {
  private counter = 0;
  constructor(
    private readonly random: () => number,
    private readonly text: TextPool,
  ) {}
  next(big: boolean, plant?: string): Message {
    this.counter += 1;
    const id = `toolu_${this.counter.toString(36)}`;
    const roll = this.random();
    const extra = plant ? ` ${plant}` : '';
    if (roll < 0.15) {
      return {
        type: 'assistant',
        message: {
          content: [
            {
              type: 'thinking',
              thinking: this.text.proseText(500 + Math.floor(this.random() * 2500)) + extra,
            },
          ],
        },
      };
    }
    if (roll < 0.35) {
      return {
        type: 'assistant',
        message: {
          content: [
            { type: 'text', text: this.text.proseText(200 + Math.floor(this.random() * 1300)) + extra },
          ],
        },
      };
    }
    if (roll < 0.6) {
      return {
        type: 'assistant',
        message: {
          content: [
            {
              type: 'tool_use',
              id,
              name: 'Edit',
              input: {
                file_path: `src/f${this.counter}.ts`,
                old_string: this.text.codeText(300),
                new_string: this.text.codeText(300) + extra,
              },
            },
          ],
        },
      };
    }
    return this.toolResult(
      id,
      big && this.random() < 0.1
        ? 200_000 + Math.floor(this.random() * 1_800_000)
        : 2_000 + Math.floor(this.random() * 58_000),
      extra,
    );
  }

  /**
   * A tool output of 0.6 to 4 MB ending in `plant`: a rare word found in a late piece of a
   * large message, as real transcripts have them (a test run's log, a file read whole).
   */
  largeOutput(plant: string): Message {
    this.counter += 1;
    return this.toolResult(
      `toolu_${this.counter.toString(36)}`,
      600_000 + Math.floor(this.random() * 3_400_000),
      ` ${plant}`,
    );
  }

  private toolResult(id: string, bytes: number, extra: string): Message {
    return {
      type: 'assistant',
      message: {
        content: [
          {
            type: 'tool_result',
            tool_use_id: id,
            content: this.text.codeText(bytes) + extra,
            is_error: false,
          },
        ],
      },
    };
  }
}

export interface Seeded {
  apiKey: string;
  organizationId: string;
  /** The corpus's one person (ada@bench.test, password SEED_PASSWORD). */
  userId: string;
  lastSessionId: string;
  transcriptBytes: number;
  sessions: number;
  /** Each session in the order written: its id, messages (the first prompt too) and their JSON bytes. */
  written: Array<{ id: string; messages: number; bytes: number }>;
  seedMs: number;
}

export const SEED_EMAIL = 'ada@bench.test';
export const SEED_PASSWORD = 'bench password, not secret';

/** The corpus written into a new data directory through the sql.js store. */
export async function seed(
  dataDir: string,
  targetMB: number,
  options: {
    progress?: (line: string) => void;
    rareInLargeOutputs?: boolean;
    /** One more session of this many MB, written first (the oldest): a heavy user's largest. */
    hugeMB?: number;
  } = {},
): Promise<Seeded> {
  const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
  try {
    return await seedStorage(storageOf(store), targetMB, options);
  } finally {
    await store.close();
  }
}

/**
 * The corpus written through `storage`'s repositories, as the product writes: the same
 * sessions and messages on either database (the sql.js store, or a team server's PostgreSQL).
 */
export async function seedStorage(
  storage: Storage,
  targetMB: number,
  options: {
    progress?: (line: string) => void;
    rareInLargeOutputs?: boolean;
    /** One more session of this many MB, written first (the oldest): a heavy user's largest. */
    hugeMB?: number;
  } = {},
): Promise<Seeded> {
  const random = randomGenerator(0x5ea4c4);
  const accounts = createAccounts(storage, systemClock);
  const user = await accounts.createUser({ email: SEED_EMAIL, name: 'Ada', password: SEED_PASSWORD });
  const workspace = await accounts.createWorkspace({ name: 'Search', ownerEmail: SEED_EMAIL });
  const key = await accounts.createKey({ organizationId: workspace.organizationId, label: 'bench' });
  const maker = new ConversationMaker(random, new TextPool(random));
  const sizes = sessionSizes(targetMB * MB, random);
  if (options.hugeMB) sizes.unshift(options.hugeMB * MB);
  const started = performance.now();
  const now = Date.now();
  let total = 0;
  let lastSessionId = '';
  const written: Seeded['written'] = [];
  for (const [n, size] of sizes.entries()) {
    const id = newId('session');
    lastSessionId = id;
    const createdAt = new Date(now - (sizes.length - n) * 60_000).toISOString();
    const initialMessage = `Session ${n}: find why the build is slow and fix it`;
    let pending: Message[] = [];
    let pendingBytes = 0;
    let bytes = JSON.stringify({ type: 'user', message: { content: initialMessage } }).length;
    let first = true;
    const flush = async () => {
      const batch = pending;
      const isFirst = first;
      pending = [];
      pendingBytes = 0;
      first = false;
      await storage.write(async (tx) => {
        if (isFirst) {
          await tx.sessions.insert({
            id,
            workspaceId: workspace.organizationId,
            authorId: user.id,
            title: `Session ${n}: find why the build is slow`,
            model: 'claude-opus-4-6',
            createdAt,
            repoUrl: 'https://github.com/acme/web',
            repository: 'acme/web',
            baseBranch: 'main',
            initialMessage,
          });
        }
        for (const message of batch)
          await tx.sessions.appendMessage(id, workspace.organizationId, message, null, createdAt);
      });
    };
    // A rare word in every (sessions / 20)th session, in its third message (in its first when
    // planted in a large output: a small session may not have three).
    const plantAt = options.rareInLargeOutputs ? 0 : 2;
    const plantEvery = Math.max(1, Math.floor(sizes.length / RARE.length));
    let count = 0;
    let bodyBytes = 0;
    while (bodyBytes < size) {
      const rare = n % plantEvery === 0 && count === plantAt ? RARE[Math.floor(n / plantEvery)] : undefined;
      const message =
        rare && options.rareInLargeOutputs ? maker.largeOutput(rare) : maker.next(size > 10 * MB, rare);
      const length = JSON.stringify(message).length;
      pending.push(message);
      pendingBytes += length;
      bodyBytes += length;
      count += 1;
      if (pendingBytes >= 2 * MB) await flush();
    }
    if (n === sizes.length - 1) {
      const end: Message = {
        type: 'assistant',
        message: { content: [{ type: 'text', text: `The end: ${LAST_MARKER}.` }] },
      };
      pending.push(end);
      bytes += JSON.stringify(end).length;
      count += 1;
    }
    await flush();
    total += bodyBytes;
    written.push({ id, messages: 1 + count, bytes: bytes + bodyBytes });
    if ((n + 1) % 200 === 0)
      options.progress?.(`  seeded ${n + 1} / ${sizes.length} sessions, ${(total / MB).toFixed(0)} MB`);
  }
  return {
    apiKey: key.key,
    organizationId: workspace.organizationId,
    userId: user.id,
    lastSessionId,
    transcriptBytes: total,
    sessions: sizes.length,
    written,
    seedMs: performance.now() - started,
  };
}

export const QUERIES: Record<'rare' | 'common' | 'prefix' | 'phrase', string[]> = {
  rare: RARE.slice(0, 10),
  common: [
    'the',
    'function',
    'error',
    'return const',
    'test file',
    'the a',
    'of and',
    'this that',
    'with on',
    'file',
  ],
  prefix: ['kalo*', 'mine*', 'rusa*', 'tivo*', 'beda*', 'fegi*', 'hoju*', 'lypa*', 'qure*', 'sito*'],
  phrase: [
    '"the a"',
    '"of the"',
    '"return const"',
    '"function error"',
    '"to of"',
    '"and in"',
    '"is it"',
    '"for that"',
    '"with this"',
    '"we be"',
  ],
};
