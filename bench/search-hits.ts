// What a search hit costs the server to show: the piece of the message the index matched, read
// from the message's JSON bytes (message-piece.ts) beside the whole message parsed, as before,
// and made from the bytes where the index says the piece starts (pieceAt), as now.
// Real-size tool outputs cut from the source files in node_modules; the first, the next to last
// and the last piece of each; the median of many rounds, both ways in one run.
//
//   node ./bin/run-ts.js bench/search-hits.ts
import { messagePiece, messagePieces, pieceAt } from '../src-main/search/message-piece.js';
import { chunks, searchableText } from '../src-main/search/message-text.js';
import { TextPool } from './corpus.js';

let seed = 7;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const pool = new TextPool(random);

const wholeParse = (json: Buffer, n: number) =>
  chunks(searchableText(JSON.parse(json.toString('utf8')) as unknown))[n];

function medianMs(run: () => unknown, rounds: number): number {
  for (let i = 0; i < 20; i += 1) run();
  const times: number[] = [];
  for (let i = 0; i < rounds; i += 1) {
    const start = performance.now();
    run();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

console.log(
  '| tool output | pieces | piece | whole parse | from the bytes | from its start | from its start / from the bytes |',
);
console.log(
  '| ----------- | ------ | ----- | ----------- | -------------- | -------------- | ------------------------------ |',
);
for (const chars of [40_000, 100_000, 200_000, 600_000, 1_500_000, 3_700_000]) {
  const message = {
    type: 'user',
    message: {
      content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: pool.codeText(chars) }],
    },
  };
  const json = Buffer.from(JSON.stringify(message));
  const count = wholeParse(json, 0) === undefined ? 0 : chunks(searchableText(message)).length;
  const rounds = chars > 1_000_000 ? 30 : 200;
  for (const n of new Set([0, Math.max(0, count - 2), count - 1])) {
    const start = messagePieces(json)?.starts[n];
    if (!start) throw new Error(`piece ${n} has no start`);
    // What a hit reads of the transcript: the bytes from the piece's start to where it is whole.
    const window = json.subarray(start.at, start.until);
    const fromStart = () => pieceAt(window, start, n, start.until === json.length);
    if (messagePiece(json, n) !== wholeParse(json, n) || fromStart() !== wholeParse(json, n))
      throw new Error(`piece ${n} differs`);
    const whole = medianMs(() => wholeParse(json, n), rounds);
    const bytes = medianMs(() => messagePiece(json, n), rounds);
    const started = medianMs(fromStart, rounds);
    console.log(
      `| ${(json.length / 1e6).toFixed(2)} MB | ${count} | ${n === 0 ? 'first' : n === count - 1 ? 'last' : 'next to last'} | ${whole.toFixed(2)} ms | ${bytes.toFixed(2)} ms | ${started.toFixed(2)} ms (${(window.length / 1024).toFixed(0)} KB read) | ${(started / bytes).toFixed(3)}× |`,
    );
  }
}
