// Claude Code session files as Claude Code 2.1.330 writes them, of real sizes, for the
// benchmarks that import a heavy user's history (bench/history-import.ts, bench/startup.ts).
import { randomUUID } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sessionSizes, TextPool } from './corpus.js';
import { randomGenerator } from './seed.js';

const MB = 1024 * 1024;
const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Planted in the last answer of every MARK_EVERY-th session (and of the last): when search finds
 * all of them, the sessions across the whole corpus are imported and indexed.
 */
export const MARKER = 'zqhistorymarker';
export const MARK_EVERY = 40;

export type Line = Record<string, unknown> & { type: string };

/** The recorded Claude Code 2.1.330 session every generated line is made from. */
function templateLines(): Line[] {
  const dir = join(
    ROOT,
    'test',
    'fixtures',
    'history',
    'claude-code',
    '2.1.330',
    'edit-and-commit',
    'projects',
  );
  const project = readdirSync(dir)[0];
  if (!project) throw new Error(`no recorded project in ${dir}`);
  const file = readdirSync(join(dir, project)).find((name) => name.endsWith('.jsonl'));
  if (!file) throw new Error(`no recorded session in ${join(dir, project)}`);
  return readFileSync(join(dir, project, file), 'utf8')
    .trim()
    .split('\n')
    .map((text) => JSON.parse(text) as Line);
}

const attachmentType = (line: Line) => (line.attachment as { type?: string } | undefined)?.type;

/**
 * Writes Claude Code sessions: the recorded session's opening (up to its first answer), then
 * turns made from its first turn (an answer, a tool call, its result and the request lines
 * around them), a new prompt every 25 turns, and its closing line.
 */
class SessionWriter {
  private readonly head: Line[];
  private readonly turn: Line[];
  private readonly closing: Line[];
  private readonly prompt: Line;
  private readonly promptSnapshot: Line;
  private tool = 0;

  constructor(
    template: Line[],
    private readonly random: () => number,
    private readonly text: TextPool,
  ) {
    const first = template.findIndex((l) => l.type === 'assistant');
    const toolsUsed = template.findIndex((l, i) => i > first && l.type === 'tools-used');
    this.head = template.slice(0, first);
    this.turn = template.slice(first, toolsUsed + 1).filter((l) => attachmentType(l) !== 'prompt_snapshot');
    this.closing = template.filter((l) => l.type === 'cost-state');
    this.prompt = template.find(
      (l) => l.type === 'user' && typeof (l.message as { content: unknown }).content === 'string',
    )!;
    this.promptSnapshot = template.find((l) => attachmentType(l) === 'prompt_snapshot')!;
  }

  /** Writes one session of about `bytes` to `path`; returns the bytes written. */
  write(path: string, bytes: number, cwd: string, started: number, lastWords?: string): number {
    const sessionId = randomUUID();
    const fd = openSync(path, 'w');
    let written = 0;
    let parent: string | null = null;
    let time = started;
    const emit = (line: Line) => {
      time += 1 + Math.floor(this.random() * 2_000);
      const copy: Line = { ...line, sessionId, timestamp: new Date(time).toISOString() };
      if ('cwd' in copy) copy.cwd = cwd;
      if ('uuid' in copy) {
        copy.uuid = randomUUID();
        copy.parentUuid = parent;
        parent = copy.uuid as string;
      }
      const text = `${JSON.stringify(copy)}\n`;
      written += writeSync(fd, text);
      return copy;
    };
    const promptText = () => `Please look into ${this.text.proseText(60 + Math.floor(this.random() * 200))}`;
    for (const line of this.head) {
      if (line === this.prompt) emit({ ...line, message: { role: 'user', content: promptText() } });
      else emit(line);
    }
    for (let turns = 0; written < bytes; turns += 1) {
      if (turns > 0 && turns % 25 === 0) {
        emit({ ...this.prompt, message: { role: 'user', content: promptText() } });
        emit(this.promptSnapshot);
      }
      this.turnLines(emit, bytes > 10 * MB);
    }
    if (lastWords) {
      emit(
        this.answer(
          this.turn.find((l) => l.type === 'assistant')!,
          `All done. ${lastWords}`,
        ),
      );
    }
    for (const line of this.closing) emit(line);
    closeSync(fd);
    return written;
  }

  /** An answer; `id` is the model response's (a text and the tool call after it share one). */
  private answer(template: Line, text: string, id = `msg_${randomUUID()}`): Line {
    const message = template.message as Record<string, unknown>;
    return { ...template, message: { ...message, id, content: [{ type: 'text', text }] } };
  }

  /** One turn: an answer, a Bash call and its output (kept three times, as Claude Code does). */
  private turnLines(emit: (line: Line) => Line, big: boolean): void {
    this.tool += 1;
    const id = `toolu_${this.tool.toString(36)}`;
    const response = `msg_${this.tool.toString(36)}`;
    const output = this.text.codeText(
      big && this.random() < 0.1
        ? 200_000 + Math.floor(this.random() * 1_800_000)
        : 2_000 + Math.floor(this.random() * 58_000),
    );
    let callUuid = '';
    let sawText = false;
    for (const line of this.turn) {
      const message = line.message as Record<string, unknown> | undefined;
      const content = (message?.content ?? []) as Array<{ type: string }>;
      if (line.type === 'assistant' && content[0]?.type === 'text' && !sawText) {
        sawText = true;
        emit(this.answer(line, this.text.proseText(200 + Math.floor(this.random() * 1_300)), response));
      } else if (line.type === 'assistant' && content[0]?.type === 'tool_use') {
        const call = emit({
          ...line,
          message: {
            ...message,
            id: response,
            content: [
              {
                type: 'tool_use',
                id,
                name: 'Bash',
                input: {
                  command: `rg -n "${this.text.proseText(12).replace(/\W/gu, '')}" src`,
                  description: 'Search the code',
                },
              },
            ],
          },
        });
        callUuid = call.uuid as string;
      } else if (line.type === 'user' && content[0]?.type === 'tool_result') {
        emit({
          ...line,
          message: { role: 'user', content: [{ tool_use_id: id, type: 'tool_result', content: output }] },
          toolUseResult: { stdout: output, stderr: '', interrupted: false, isImage: false },
          sourceToolAssistantUUID: callUuid,
        });
      } else if (line.type === 'api-request-blob') {
        emit({
          ...line,
          hash: randomUUID().replaceAll('-', ''),
          message: { role: 'user', content: [{ tool_use_id: id, type: 'tool_result', content: output }] },
        });
      } else if (line.type !== 'assistant') {
        emit(line);
      }
    }
  }
}

export interface Corpus {
  root: string;
  bytes: number;
  sessions: number;
  /** How many sessions hold MARKER. */
  markers: number;
  lastFile: string;
  writeMs: number;
}

/**
 * Writes about `targetMB` of sessions under `root` (a `~/.claude` of its own), always the same
 * for the same size; `progress` hears every 200th session.
 */
export function writeCorpus(root: string, targetMB: number, progress: (line: string) => void): Corpus {
  const random = randomGenerator(0x415701);
  const writer = new SessionWriter(templateLines(), random, new TextPool(random));
  const sizes = sessionSizes(targetMB * MB, random);
  if (Math.ceil(sizes.length / MARK_EVERY) + 1 > 100)
    throw new Error('too many sessions for one page of markers');
  const started = performance.now();
  const now = Date.now();
  let bytes = 0;
  let lastFile = '';
  let markers = 0;
  for (const [n, size] of sizes.entries()) {
    // Twenty projects, as a person's repositories: `-home-ada-src-<name>` is how Claude Code names them.
    const project = join(root, 'projects', `-home-ada-src-project-${n % 20}`);
    mkdirSync(project, { recursive: true });
    lastFile = join(project, `${randomUUID()}.jsonl`);
    const marked = n % MARK_EVERY === 0 || n === sizes.length - 1;
    if (marked) markers += 1;
    bytes += writer.write(
      lastFile,
      size,
      `/home/ada/src/project-${n % 20}`,
      now - (sizes.length - n) * 3_600_000,
      marked ? MARKER : undefined,
    );
    if (n % 200 === 0) progress(`  wrote ${n} of ${sizes.length} sessions, ${(bytes / MB).toFixed(0)} MB`);
  }
  return { root, bytes, sessions: sizes.length, markers, lastFile, writeMs: performance.now() - started };
}
