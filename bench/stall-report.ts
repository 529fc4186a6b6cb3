import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What the main thread ran during each stall a traced run noted (bench/stall-trace.ts): per
 * stall, longest first, the functions with the most samples in it, by self time and with the
 * call that led to each.
 *
 * Usage: npx tsx bench/stall-report.ts FOLDER [STALLS=10]
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const folder = process.argv[2];
if (!folder) throw new Error('usage: npx tsx bench/stall-report.ts FOLDER [STALLS]');
const shown = Number(process.argv[3] ?? 10);
const stalls = JSON.parse(readFileSync(join(folder, 'stalls.json'), 'utf8')) as Array<{
  endedAtUs: number;
  gapMs: number;
}>;
const profile = JSON.parse(readFileSync(join(folder, 'server.cpuprofile'), 'utf8')) as Profile;

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
const name = (node: ProfileNode | undefined) => {
  if (!node) return '?';
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url.split('/').pop() ?? '';
  return `${functionName || '(anonymous)'}${file ? ` ${file}:${lineNumber + 1}` : ''}`;
};

const times: number[] = [];
let t = profile.startTime;
for (const delta of profile.timeDeltas) times.push((t += delta));

for (const stall of [...stalls].sort((a, b) => b.gapMs - a.gapMs).slice(0, shown)) {
  const from = stall.endedAtUs - stall.gapMs * 1000;
  const counts = new Map<number, number>();
  let inside = 0;
  profile.samples.forEach((id, i) => {
    const at = times[i] as number;
    if (at < from || at > stall.endedAtUs) return;
    inside += 1;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  });
  console.log(
    `\n${stall.gapMs} ms ending ${((stall.endedAtUs - profile.startTime) / 1e6).toFixed(1)} s in: ${inside} samples`,
  );
  for (const [id, count] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, 8)) {
    const node = byId.get(id);
    const caller = byId.get(parentOf.get(id) ?? -1);
    const grand = byId.get(parentOf.get(caller?.id ?? -1) ?? -1);
    console.log(`  ${String(count).padStart(4)}  ${name(node)}  <  ${name(caller)}  <  ${name(grand)}`);
  }
}
