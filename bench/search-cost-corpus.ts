// A data directory for bench/search-query-cost.ts, built without the 3 GB of `bench:search`:
// SEARCH_COST_MB (default 300) of the search bench's transcripts, its 20 rare words each planted
// at the end of a tool output of 0.6 to 4 MB (a hit in a late piece of a large message), and the
// words file of four kinds. Prints the environment to run search-query-cost.ts with.
//
//   SEARCH_COST_MB=300 node ./bin/run-ts.js bench/search-cost-corpus.ts /tmp/search-cost-data
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { QUERIES, RARE, seed } from './search-corpus.js';

const dataDir = process.argv[2];
const targetMB = Number(process.env.SEARCH_COST_MB ?? 300);
if (!dataDir || !Number.isFinite(targetMB) || targetMB <= 0) {
  console.error('Usage: [SEARCH_COST_MB=300] search-cost-corpus.ts DIR (a new or empty directory)');
  process.exit(2);
}
if (existsSync(dataDir) && readdirSync(dataDir).length > 0) {
  console.error(`${dataDir} is not empty: give a new directory`);
  process.exit(2);
}
const seeded = await seed(dataDir, targetMB, {
  rareInLargeOutputs: true,
  progress: (line) => console.error(line),
});
const wordsFile = `${resolve(dataDir)}-words.json`;
// The queries the bench asks: every rare word; the other kinds as bench:search asks them.
writeFileSync(wordsFile, JSON.stringify({ ...QUERIES, rare: RARE }, null, 2));
console.error(
  `${(seeded.transcriptBytes / 1024 / 1024).toFixed(0)} MB in ${seeded.sessions} sessions, ${(seeded.seedMs / 1000).toFixed(1)} s`,
);
console.log(
  `SEARCH_COST_DATA=${resolve(dataDir)} SEARCH_COST_KEY=${seeded.apiKey} SEARCH_COST_WORDS=${wordsFile}`,
);
