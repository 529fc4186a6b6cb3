import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentEvent, AgentParser } from '../../../src-main/agents/agent-events.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'agents');

/** The CLI versions recorded for a kind (the folders under test/fixtures/agents/<kind>). */
export function recordedVersions(kind: string): string[] {
  return readdirSync(join(FIXTURES, kind));
}

/** The scenarios recorded for a kind and version, by file name without `.jsonl`. */
export function recordedScenarios(kind: string, version: string): string[] {
  return readdirSync(join(FIXTURES, kind, version))
    .filter((f) => f.endsWith('.jsonl'))
    .map((f) => f.slice(0, -'.jsonl'.length));
}

/** A file kept beside a kind's recordings, such as what the CLI wrote on stderr. */
export function fixtureFile(kind: string, version: string, name: string): string {
  return readFileSync(join(FIXTURES, kind, version, name), 'utf8');
}

export function fixtureLines(kind: string, version: string, scenario: string): string[] {
  return readFileSync(join(FIXTURES, kind, version, `${scenario}.jsonl`), 'utf8').split('\n');
}

/** The parsed JSON lines of a fixture that satisfy `pick`. */
export function fixtureRecords(
  kind: string,
  version: string,
  scenario: string,
  pick: (record: Record<string, unknown>) => boolean,
): Record<string, unknown>[] {
  return fixtureLines(kind, version, scenario)
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter(pick);
}

/**
 * Replays a recording through fresh parsers, one per run (a resumed conversation's file holds
 * several runs; `startsRun` recognises each run's first line), and returns each run's events,
 * those of `end()` included.
 */
export function replay(
  lines: string[],
  createParser: () => AgentParser,
  startsRun: (line: string) => boolean,
): AgentEvent[][] {
  const runs: AgentEvent[][] = [];
  let parser: AgentParser | null = null;
  for (const line of lines) {
    if (startsRun(line) || parser === null) {
      if (parser) runs[runs.length - 1]!.push(...parser.end());
      parser = createParser();
      runs.push([]);
    }
    runs[runs.length - 1]!.push(...parser.line(line));
  }
  if (parser) runs[runs.length - 1]!.push(...parser.end());
  return runs;
}
