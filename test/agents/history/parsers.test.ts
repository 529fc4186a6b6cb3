// The session-file parsers over the real files the CLIs wrote (test/fixtures/history/).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createClaudeCodeHistoryParser, subAgentParent } from '../../../src-main/history/claude-code.js';
import { createCodexHistoryParser } from '../../../src-main/history/codex.js';
import { createGeminiHistoryParser } from '../../../src-main/history/gemini.js';
import { readChatDocument } from '../../../src-main/history/gemini-document.js';
import type { HistoryEvent, HistoryFacts, HistoryParser } from '../../../src-main/history/history-events.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'history');

function filesUnder(dir: string, match: RegExp): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path, match);
    return match.test(name) ? [path] : [];
  });
}

function scenarios(kind: string): { version: string; scenario: string; dir: string }[] {
  return readdirSync(join(root, kind)).flatMap((version) =>
    readdirSync(join(root, kind, version)).map((scenario) => ({
      version,
      scenario,
      dir: join(root, kind, version, scenario),
    })),
  );
}

function parse(parser: HistoryParser, file: string): { events: HistoryEvent[]; facts: HistoryFacts } {
  const events = readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((line) => parser.line(line));
  events.push(...parser.flush());
  return { events, facts: parser.facts };
}

function blocks(events: HistoryEvent[]) {
  return events.flatMap((e) => (e.kind === 'assistant' ? e.content : []));
}

/** Every tool call has its result, and every result its call. */
function expectPaired(events: HistoryEvent[]): void {
  const all = blocks(events);
  const calls = all.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
  const results = all.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : []));
  expect(new Set(results)).toEqual(new Set(calls));
}

const lastTasks = (events: HistoryEvent[]) => events.filter((e) => e.kind === 'tasks').at(-1);
const runs = (events: HistoryEvent[]) =>
  events.flatMap((e) => (e.kind === 'run' ? [{ ...e.usage, costUsd: e.costUsd }] : []));
const prompts = (events: HistoryEvent[]) => events.flatMap((e) => (e.kind === 'prompt' ? [e.text] : []));

describe('Claude Code session files', () => {
  const all = scenarios('claude-code');
  const main = (dir: string) =>
    filesUnder(join(dir, 'projects'), /\.jsonl$/u).filter((f) => !f.includes('/subagents/'));
  it.each(all)(
    '$version $scenario: facts, paired calls, a run per process, no unknown line',
    ({ dir, scenario }) => {
      const [file] = main(dir);
      const { events, facts } = parse(createClaudeCodeHistoryParser(), file!);
      expect(facts.conversationId).toBe(file!.split('/').pop()!.replace('.jsonl', ''));
      expect(facts.cwd).toMatch(/repo$/u);
      expect(facts.branch).toBe('main');
      expect(Date.parse(facts.firstAt!)).toBeLessThanOrEqual(Date.parse(facts.lastAt!));
      expect(prompts(events).length).toBeGreaterThan(0);
      expect(runs(events)).toHaveLength(scenario === 'resume' ? 2 : 1);
      expect(facts.failed).toBe(scenario.startsWith('error-') || scenario === 'api-retry');
      expect(events.filter((e) => e.kind === 'notice' && e.text.startsWith('{'))).toEqual([]);
      expectPaired(events);
    },
  );

  it('plain answer: thinking, text, the model, and the CLI own cost', () => {
    const [file] = main(all.find((s) => s.scenario === 'plain-answer')!.dir);
    const { events, facts } = parse(createClaudeCodeHistoryParser(), file!);
    expect(blocks(events).map((b) => b.type)).toEqual(expect.arrayContaining(['thinking', 'text']));
    expect(facts.model).toBe('claude-sonnet-4-5');
    expect(runs(events)[0]).toMatchObject({
      inputTokens: 120,
      outputTokens: 14,
      cacheReadTokens: 30,
      cacheWriteTokens: 40,
      costUsd: 0.000729,
    });
  });

  it('without cost-state lines: each message counted once, a run ending at the next prompt, and a later cost-state adds only the rest', () => {
    const [file] = main(all.find((s) => s.scenario === 'resume')!.dir);
    const lines = readFileSync(file!, 'utf8').split('\n');
    const recorded = runs(parse(createClaudeCodeHistoryParser(), file!).events);
    // The first run's cost-state line left out, as a run cut short leaves it.
    const firstEnd = lines.findIndex((l) => l.includes('"type":"cost-state"'));
    const parser = createClaudeCodeHistoryParser();
    const events = lines.filter((_, i) => i !== firstEnd).flatMap((line) => parser.line(line));
    const [first, second] = runs(events);
    const tokens = ({
      inputTokens,
      outputTokens,
      cacheReadTokens,
      cacheWriteTokens,
    }: typeof first & object) => ({
      inputTokens,
      outputTokens,
      cacheReadTokens,
      cacheWriteTokens,
    });
    expect(tokens(first!)).toEqual(tokens(recorded[0]!));
    expect(tokens(second!)).toEqual(tokens(recorded[1]!));
    // Priced by the table (the model is in it), and the CLI's total stays the total.
    expect(first!.costUsd).toBeGreaterThan(0);
    expect(first!.costUsd! + second!.costUsd!).toBeCloseTo(recorded[0]!.costUsd! + recorded[1]!.costUsd!, 9);
    // Its result ends the first run, before the next prompt.
    const kinds = events.map((e) => e.kind).filter((k) => k === 'prompt' || k === 'run' || k === 'result');
    expect(kinds).toEqual(['prompt', 'run', 'result', 'prompt', 'run', 'result']);
  });

  it('a file with no cost-state line at all: its run ends when the file goes quiet (flush)', () => {
    const [file] = main(all.find((s) => s.scenario === 'plain-answer')!.dir);
    const parser = createClaudeCodeHistoryParser();
    const text = readFileSync(file!, 'utf8');
    const events = text
      .split('\n')
      .filter((l) => !l.includes('"type":"cost-state"'))
      .flatMap((line) => parser.line(line));
    expect(runs(events)).toEqual([]);
    // Read back from its saved state, as the next scan reads it.
    const [run] = runs(createClaudeCodeHistoryParser(undefined, parser.state()).flush());
    expect(run).toMatchObject({
      inputTokens: 120,
      outputTokens: 14,
      cacheReadTokens: 30,
      cacheWriteTokens: 40,
    });
    expect(run!.costUsd).toBeGreaterThan(0);
  });

  it('resume: each run counts its own usage, not the running total', () => {
    const [file] = main(all.find((s) => s.scenario === 'resume')!.dir);
    const [first, second] = runs(parse(createClaudeCodeHistoryParser(), file!).events);
    expect(first!.costUsd! + second!.costUsd!).toBeCloseTo(0.000909, 9);
    expect(second!.inputTokens).toBe(120);
  });

  it('todo and task tools give tasks', () => {
    for (const name of ['todo-write', 'task-tracking']) {
      const [file] = main(all.find((s) => s.scenario === name)!.dir);
      const tasks = lastTasks(parse(createClaudeCodeHistoryParser(), file!).events);
      expect(tasks?.kind === 'tasks' && tasks.tasks.length).toBeGreaterThan(1);
    }
  });

  it("a sub-agent's file is marked with the call that started it", () => {
    const dir = all.find((s) => s.scenario === 'sub-agent')!.dir;
    const [file] = filesUnder(dir, /^agent-.*\.jsonl$/u);
    const parent = subAgentParent(readFileSync(file!.replace(/\.jsonl$/u, '.meta.json'), 'utf8'));
    const [mainFile] = main(dir);
    const callIds = blocks(parse(createClaudeCodeHistoryParser(), mainFile!).events).flatMap((b) =>
      b.type === 'tool_use' && b.name === 'Agent' ? [b.id] : [],
    );
    expect(callIds).toContain(parent);
    const { events } = parse(createClaudeCodeHistoryParser(parent), file!);
    const assistant = events.filter((e) => e.kind === 'assistant');
    expect(assistant.length).toBeGreaterThan(0);
    expect(assistant.every((e) => e.kind === 'assistant' && e.parentToolUseId === parent)).toBe(true);
    expect(prompts(events)).toEqual([]);
  });

  it('an unknown line and a torn line become notices, not errors', () => {
    const parser = createClaudeCodeHistoryParser();
    expect(parser.line('{"type":"brand-new-kind","x":1}')).toEqual([
      { kind: 'notice', level: 'info', text: '{"type":"brand-new-kind","x":1}' },
    ]);
    expect(parser.line('{"type":"assist')).toEqual([
      { kind: 'notice', level: 'info', text: '{"type":"assist' },
    ]);
  });
});

describe('Codex rollout files', () => {
  const all = scenarios('codex');
  const file = (dir: string) => filesUnder(join(dir, 'sessions'), /^rollout-.*\.jsonl$/u)[0]!;
  it.each(all)(
    '$version $scenario: facts, paired calls, a run per turn, no unknown line',
    ({ dir, scenario }) => {
      const { events, facts } = parse(createCodexHistoryParser(), file(dir));
      expect(file(dir)).toContain(facts.conversationId!);
      expect(facts).toMatchObject({
        branch: 'main',
        model: 'gpt-5.5',
        failed: scenario.startsWith('error-'),
      });
      expect(runs(events)).toHaveLength(scenario === 'resume' ? 2 : 1);
      expect(prompts(events).length).toBe(scenario === 'resume' ? 2 : 1);
      expect(events.filter((e) => e.kind === 'notice' && e.text.startsWith('{'))).toEqual([]);
      expectPaired(events);
    },
  );

  it('update_plan gives tasks; reasoning gives thinking; usage is per turn', () => {
    const { events } = parse(
      createCodexHistoryParser(),
      file(all.find((s) => s.scenario === 'todo-list')!.dir),
    );
    const tasks = lastTasks(events);
    expect(tasks).toMatchObject({
      tasks: [{ title: 'Write the notes', status: 'completed' }, { status: 'in_progress' }],
    });
    const resume = runs(
      parse(createCodexHistoryParser(), file(all.find((s) => s.scenario === 'resume')!.dir)).events,
    );
    expect(resume[1]!.outputTokens).toBeGreaterThan(0);
    // Codex records no cost: gpt-5.5 is priced by the table, at genai-prices' OpenAI prices
    // (dollars per million tokens: input 5, cached input 0.5, output 30).
    for (const run of resume) {
      const expected = (run.inputTokens * 5 + run.cacheReadTokens * 0.5 + run.outputTokens * 30) / 1_000_000;
      expect(run.costUsd).toBeCloseTo(expected, 12);
    }
    const edit = parse(
      createCodexHistoryParser(),
      file(all.find((s) => s.scenario === 'edit-and-commit')!.dir),
    ).events;
    expect(blocks(edit).map((b) => b.type)).toContain('thinking');
  });
});

/**
 * A Gemini chat file as lines: a JSONL file's own, or those the importer hands the parser for
 * an older chat document (`session-*.json`, Gemini CLI 0.19.1 here).
 */
async function geminiParse(file: string): Promise<{ events: HistoryEvent[]; facts: HistoryFacts }> {
  const parser = createGeminiHistoryParser();
  if (file.endsWith('.jsonl')) return parse(parser, file);
  const handle = await open(file);
  const document = await readChatDocument(handle, (await handle.stat()).size, true).finally(() =>
    handle.close(),
  );
  const events: HistoryEvent[] = [];
  for await (const batch of document!.batches(0)) events.push(...batch.lines.flatMap((l) => parser.line(l)));
  events.push(...parser.flush());
  return { events, facts: parser.facts };
}

describe('Gemini CLI chat files', () => {
  const all = scenarios('gemini');
  const file = (dir: string) => filesUnder(join(dir, 'tmp'), /^session-.*\.jsonl?$/u)[0]!;
  it.each(all)('$version $scenario: facts, paired calls, no unknown line', async ({ dir, scenario }) => {
    const { events, facts } = await geminiParse(file(dir));
    expect(file(dir)).toContain(facts.conversationId!.slice(0, 8));
    expect(prompts(events).length).toBe(scenario === 'resume' ? 2 : 1);
    expect(runs(events)).toHaveLength(scenario === 'resume' ? 2 : 1);
    expect(events.filter((e) => e.kind === 'notice' && e.text.startsWith('{'))).toEqual([]);
    expectPaired(events);
  });

  it.each(['0.61.0', '0.19.1'])(
    '%s: write_todos gives tasks, a call rewritten under its id is shown once',
    async (version) => {
      const { events } = await geminiParse(
        file(all.find((s) => s.scenario === 'write-todos' && s.version === version)!.dir),
      );
      expect(lastTasks(events)).toMatchObject({
        tasks: expect.arrayContaining([expect.objectContaining({ status: 'completed' })]),
      });
      const ids = blocks(events).flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
      // Gemini records no cost: gemini-2.5-pro is priced by the table, at genai-prices' Gemini
      // API prices up to 200k tokens (dollars per million tokens: input 1.25, output 10, cached
      // input 0.125).
      const [run] = runs(events);
      const expected =
        (run!.inputTokens * 1.25 + run!.outputTokens * 10 + run!.cacheReadTokens * 0.125) / 1_000_000;
      expect(run!.costUsd).toBeCloseTo(expected, 12);
      expect(run!.costUsd).toBeGreaterThan(0);
      expect(new Set(ids).size).toBe(ids.length);
    },
  );
});
