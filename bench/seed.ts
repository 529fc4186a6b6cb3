import { createAccounts } from '../src-main/accounts/accounts.js';
import { newId } from '../src-main/accounts/secrets.js';
import { silentLogger, systemClock } from '../src-main/clock.js';
import { createRepositories } from '../src-main/store/repositories.js';
import { Store, type SnapshotInfo } from '../src-main/store/store.js';
import type { User } from '../src-shared/accounts.js';
import { DEFAULT_BASE_BRANCH, DEFAULT_MODEL } from '../src-shared/constants.js';
import { MessageSchema, type Message } from '../src-shared/sessions.js';
import { makePreview, makeTitle } from '../src-shared/text.js';
import { messageText } from '../src-main/store/session-row.js';
import { seededRandom } from '../src-main/seeded-random.js';
import { readAllMessages } from '../src-main/sessions/transcript-reads.js';
import { storageOf, readsOf } from '../src-main/store/sqljs-storage.js';

/**
 * Builds a realistic workspace through the product's own store, repositories and account
 * code, so the data on disk is exactly what the app would have written itself.
 */

export interface SeedOptions {
  dataDir: string;
  sessions: number;
  messagesPerSession: number;
  /** Sessions are created at an even pace over this many days, ending an hour ago. */
  spanDays: number;
  /** Progress lines go here (stderr), so stdout keeps only the results. */
  progress: (line: string) => void;
}

export interface SeededWorkspace {
  organizationId: string;
  apiKey: string;
  sessionIds: string[];
  messageBytes: number;
  messages: number;
  seedMs: number;
  snapshot: SnapshotInfo;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const MESSAGE_GAP_MS = 7_000;
/** About 1,000 messages per durable write keeps seeding quick without huge journal records. */
const MESSAGES_PER_WRITE = 1_000;
const PASSWORD = 'bench password, not secret';

const PEOPLE = [
  { email: 'ada@bench.test', name: 'Ada Lovelace' },
  { email: 'grace@bench.test', name: 'Grace Hopper' },
  { email: 'linus@bench.test', name: 'Linus Park' },
  { email: 'margaret@bench.test', name: 'Margaret Hamilton' },
];
const REPOSITORIES = ['web-app', 'api-server', 'mobile', 'infra', 'design-system', 'docs'];

const WORDS = (
  'the a session list page cursor index query handler schema request response store journal ' +
  'snapshot migration workspace token latency cache render component state test fixture error retry ' +
  'timeout parse validate field column row filter branch commit merge review function module import ' +
  'export type value config server client route plugin hook and with from into then so that we it ' +
  'this should can now also before after when because only each returns keeps reads writes updates ' +
  'checks builds fails passes calls adds removes moves renames'
).split(' ');
const FILES = [
  'src/server/routes/sessions.ts',
  'src/store/journal.ts',
  'src/components/SessionList.tsx',
  'src/api/client.ts',
  'test/api/sessions.test.ts',
  'src/store/migrations.ts',
  'package.json',
  'README.md',
];
const TOOLS = ['Read', 'Grep', 'Bash', 'Edit'] as const;

/** The same seeded generator as the demo agent's, so every run seeds the same text. */
export const randomGenerator = seededRandom;

class TextMaker {
  constructor(readonly random: () => number) {}

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)] as T;
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.random() * (max - min + 1));
  }

  /** Prose of exactly `length` characters (at least one), in sentences. */
  prose(length: number): string {
    const parts: string[] = [];
    let size = 0;
    while (size < length) {
      const words = Array.from({ length: this.int(6, 16) }, () => this.pick(WORDS));
      const sentence = `${words.join(' ')}.`;
      const text = sentence.charAt(0).toUpperCase() + sentence.slice(1);
      const joined = parts.length === 0 ? text : (this.random() < 0.15 ? '\n\n' : ' ') + text;
      parts.push(joined);
      size += joined.length;
    }
    return parts.join('').slice(0, Math.max(1, length)).trimEnd() || 'Done.';
  }

  /** Lines of a file as a tool would print them. */
  listing(length: number): string {
    const lines: string[] = [];
    let size = 0;
    for (let n = this.int(1, 400); size < length; n += 1) {
      const line = `${String(n).padStart(5)}\t${Array.from({ length: this.int(2, 8) }, () => this.pick(WORDS)).join(' ')};`;
      lines.push(line);
      size += line.length + 1;
    }
    return lines.join('\n').slice(0, Math.max(1, length));
  }
}

/** Fills the one free-text field of `build` so the message's JSON is about `target` bytes. */
function sized(target: number, build: (fill: string) => Message, fill: (length: number) => string): Message {
  const envelope = JSON.stringify(build('')).length;
  return build(fill(Math.max(40, target - envelope)));
}

/** A conversation like a coding agent's: a prompt, then text, tool calls and their results. */
function makeConversation(
  text: TextMaker,
  count: number,
  sessionNumber: number,
): { prompt: string; replies: Message[] } {
  const target = () => text.int(850, 1150);
  const prompt = `Session ${sessionNumber}: ${text.prose(target() - 60)}`;
  const replies: Message[] = [];
  let lastToolId = 'toolu_0';
  for (let index = 1; index < count; index += 1) {
    const messageId = `msg_${sessionNumber}_${index}`;
    const assistant = (content: unknown[], stop: string): Message =>
      ({
        type: 'assistant',
        message: {
          id: messageId,
          type: 'message',
          role: 'assistant',
          model: DEFAULT_MODEL,
          content,
          stop_reason: stop,
          usage: { input_tokens: text.int(200, 9000), output_tokens: text.int(20, 900) },
        },
      }) as Message;
    if (index === count - 1 && count > 2) {
      replies.push(
        sized(
          target(),
          (fill) => ({
            type: 'result',
            subtype: 'success',
            is_error: false,
            result: fill,
            duration_ms: text.int(20_000, 900_000),
            num_turns: count,
            total_cost_usd: Math.round(text.random() * 300) / 100,
          }),
          (n) => text.prose(n),
        ),
      );
      continue;
    }
    const kind = (index - 1) % 4;
    if (kind === 1) {
      const tool = text.pick(TOOLS);
      lastToolId = `toolu_${sessionNumber}_${index}`;
      const file = text.pick(FILES);
      const input =
        tool === 'Bash'
          ? { command: 'npm test -- --run sessions', description: 'Run the session tests' }
          : tool === 'Grep'
            ? { pattern: text.pick(WORDS), path: 'src' }
            : tool === 'Edit'
              ? { file_path: file, old_string: text.prose(60), new_string: text.prose(70) }
              : { file_path: file };
      replies.push(
        sized(
          target(),
          (fill) =>
            assistant(
              [
                { type: 'text', text: fill },
                { type: 'tool_use', id: lastToolId, name: tool, input },
              ],
              'tool_use',
            ),
          (n) => text.prose(n),
        ),
      );
    } else if (kind === 2) {
      replies.push(
        sized(
          target(),
          (fill) => assistant([{ type: 'tool_result', tool_use_id: lastToolId, content: fill }], 'end_turn'),
          (n) => text.listing(n),
        ),
      );
    } else {
      replies.push(
        sized(
          target(),
          (fill) => assistant([{ type: 'text', text: fill }], 'end_turn'),
          (n) => text.prose(n),
        ),
      );
    }
  }
  return { prompt, replies };
}

/** Stored titles and previews must be what the real segmenter makes. */
async function checkPreviews(
  source: { store: Store; repos: ReturnType<typeof createRepositories> },
  ids: string[],
): Promise<void> {
  for (const id of ids) {
    const row = source.repos.sessions.find(id);
    if (!row) throw new Error(`seeded session ${id} is missing`);
    const texts = ((await readAllMessages(readsOf(source.store), id)) as Message[])
      .map((message) => messageText(message))
      .filter((text): text is string => text !== null);
    const expected = {
      title: makeTitle(texts[0]),
      first: texts[0] === undefined ? undefined : makePreview(texts[0]),
      last: texts.at(-1) === undefined ? undefined : makePreview(texts.at(-1) as string),
    };
    const actual = { title: row.title, first: row.firstPreview, last: row.lastPreview };
    if (JSON.stringify(expected) !== JSON.stringify(actual)) {
      throw new Error(
        `seeded session ${id}: expected ${JSON.stringify(expected)}, stored ${JSON.stringify(actual)}`,
      );
    }
  }
}

/** Milliseconds the product takes to make the preview of one message with this much text. */
export function timePreview(length: number, repeats: number): number {
  const text = new TextMaker(randomGenerator(length)).prose(length);
  const started = performance.now();
  for (let i = 0; i < repeats; i += 1) makePreview(`${i} ${text}`);
  return (performance.now() - started) / repeats;
}

interface PendingSession {
  n: number;
  id: string;
  author: { id: string };
  createdMs: number;
  conversation: { prompt: string; replies: Message[] };
  roll: number;
}

export async function seedWorkspace(options: SeedOptions): Promise<SeededWorkspace> {
  const started = performance.now();
  const clock = systemClock;
  const store = await Store.open({ dataDir: options.dataDir, clock, logger: silentLogger });
  try {
    const repos = createRepositories(store.db);
    const accounts = createAccounts(storageOf(store), clock);
    const users: User[] = [];
    for (const person of PEOPLE) users.push(await accounts.createUser({ ...person, password: PASSWORD }));
    const owner = PEOPLE[0] as (typeof PEOPLE)[number];
    const workspace = await accounts.createWorkspace({ name: 'Bench workspace', ownerEmail: owner.email });
    for (const person of PEOPLE.slice(1)) {
      await accounts.addMember({ organizationId: workspace.organizationId, email: person.email });
    }
    const key = await accounts.createKey({
      organizationId: workspace.organizationId,
      label: 'bench',
      createdBy: users[0]?.id,
    });

    const text = new TextMaker(randomGenerator(0x5e55_10de));
    const now = clock.now().getTime();
    const end = now - 60 * 60 * 1000;
    const span = options.spanDays * DAY_MS;
    const sessionIds: string[] = [];
    let messages = 0;
    let messageBytes = 0;
    const perWrite = Math.max(1, Math.round(MESSAGES_PER_WRITE / options.messagesPerSession));

    for (let first = 0; first < options.sessions; first += perWrite) {
      const last = Math.min(options.sessions, first + perWrite);
      const batch: PendingSession[] = [];
      for (let n = first; n < last; n += 1) {
        const author = users[n % users.length] as (typeof users)[number];
        const createdMs = end - span + Math.floor(((n + 1) * span) / options.sessions);
        const conversation = makeConversation(text, options.messagesPerSession, n);
        if (n === 0) {
          // The shapes must be ones the API would accept and serve.
          MessageSchema.parse({ type: 'user', message: { content: conversation.prompt } });
          for (const message of conversation.replies) MessageSchema.parse(message);
        }
        batch.push({ n, id: newId('session'), author, createdMs, conversation, roll: text.random() });
      }
      await store.write(() => {
        for (const s of batch) {
          const repo = text.pick(REPOSITORIES);
          const createdAt = new Date(s.createdMs).toISOString();
          repos.sessions.insert({
            id: s.id,
            workspaceId: workspace.organizationId,
            authorId: s.author.id,
            title: makeTitle(s.conversation.prompt),
            model: DEFAULT_MODEL,
            createdAt,
            repoUrl: `https://github.com/acme/${repo}`,
            repository: `acme/${repo}`,
            baseBranch: DEFAULT_BASE_BRANCH,
            initialMessage: s.conversation.prompt,
          });
          let at = s.createdMs;
          for (const message of s.conversation.replies) {
            at += MESSAGE_GAP_MS;
            repos.sessions.appendMessage(
              s.id,
              workspace.organizationId,
              message,
              null,
              new Date(at).toISOString(),
            );
          }
          messages += 1 + s.conversation.replies.length;
          messageBytes +=
            JSON.stringify({ type: 'user', message: { content: s.conversation.prompt } }).length +
            s.conversation.replies.reduce((sum, m) => sum + JSON.stringify(m).length, 0);
          // Sessions older than a day have finished; about a third opened a pull request.
          if (now - s.createdMs > DAY_MS) {
            const finishedAt = new Date(at + 60_000).toISOString();
            repos.sessions.setBranch(s.id, `agent/session-${s.n}`, finishedAt);
            repos.sessions.update(s.id, { status: s.roll < 0.9 ? 'completed' : 'failed' }, finishedAt);
            if (s.roll < 0.33) {
              const status = s.roll < 0.2 ? 'merged' : s.roll < 0.28 ? 'open' : 'closed';
              repos.sessions.updatePullRequest(
                s.id,
                {
                  number: 1000 + s.n,
                  url: `https://github.com/acme/${repo}/pull/${1000 + s.n}`,
                  status,
                  ...(status === 'merged' ? { mergedAt: finishedAt } : {}),
                },
                finishedAt,
              );
            }
          }
          sessionIds.push(s.id);
        }
      });
      if (last % (perWrite * 40) === 0 || last === options.sessions) {
        options.progress(
          `  seeded ${last.toLocaleString('en-US')} / ${options.sessions.toLocaleString('en-US')}`,
        );
      }
    }
    await checkPreviews(
      { store, repos },
      sessionIds.filter((_, i) => i % Math.ceil(sessionIds.length / 50) === 0),
    );
    // A snapshot started in the background during seeding is returned as is by snapshot()
    // and lacks the writes made since it began; the second call takes a fresh one.
    await store.snapshot();
    const snapshot = await store.snapshot();
    return {
      organizationId: workspace.organizationId,
      apiKey: key.key,
      sessionIds,
      messageBytes,
      messages,
      seedMs: performance.now() - started,
      snapshot,
    };
  } finally {
    await store.close({ snapshot: false });
  }
}
