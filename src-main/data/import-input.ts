import { EXPORT_TYPE } from './format.js';
import { LineTooLong, MAX_LINE_BYTES } from './lines.js';
import {
  ImportInputError,
  isObject,
  JSON_DOCUMENT_MAX_CHARS,
  parseHeader,
  parseJson,
  tooLong,
  wholeSession,
  type Entry,
  type Input,
  type NumberedLine,
} from './import-records.js';
import { version2 } from './import-streamed.js';

/** Version 1 NDJSON: one whole session per line. */
async function* version1(next: () => Promise<NumberedLine | null>): AsyncGenerator<Entry> {
  for (let line = await next(); line !== null; line = await next()) {
    const { lineNo, text } = line;
    const at = `line ${lineNo}`;
    const skip = (reason: string, isSession = true): Entry => ({
      kind: 'skip',
      at,
      order: lineNo,
      reason,
      isSession,
    });
    if (text instanceof LineTooLong) {
      yield skip(`${text.bytes} bytes long, over the ${MAX_LINE_BYTES / 2 ** 20} MiB a session may take`);
      continue;
    }
    if (text.trim() === '') continue;
    const parsed = parseJson(text);
    if (!parsed.ok) {
      yield skip(`not JSON (${parsed.why})`);
      continue;
    }
    if (isObject(parsed.value) && parsed.value.type === EXPORT_TYPE) {
      yield skip('a second export header: only one is allowed, at the start', false);
      continue;
    }
    const whole = wholeSession(parsed.value);
    yield whole.ok ? { kind: 'session', at, order: lineNo, session: whole.session } : skip(whole.why);
  }
}

/**
 * Reads the input's format and header, and yields its sessions one by one. NDJSON is read
 * line by line (version 2 holds at most one batch of a session in memory); a JSON document
 * is read whole (use NDJSON for very large workspaces).
 */
export async function openInput(lines: AsyncIterable<string | LineTooLong>): Promise<Input> {
  const iterator = lines[Symbol.asyncIterator]();
  let lineNo = 0;
  const next = async (): Promise<NumberedLine | null> => {
    const result = await iterator.next();
    if (result.done) return null;
    lineNo += 1;
    return { lineNo, text: result.value };
  };
  let firstLine: string | null = null;
  for (let line = await next(); line !== null; line = await next()) {
    if (line.text instanceof LineTooLong) throw tooLong(line.text);
    const text = line.lineNo === 1 ? line.text.replace(/^\uFEFF/u, '') : line.text;
    if (text.trim() !== '') {
      firstLine = text;
      break;
    }
  }
  if (firstLine === null) throw new ImportInputError('The input is empty: not a Session Desk export.');

  const first = parseJson(firstLine);
  if (first.ok && isObject(first.value) && !('sessions' in first.value)) {
    const header = parseHeader(first.value);
    if (header.version === 1) return { format: 'ndjson', header, entries: version1(next), ended: () => null };
    const state = { ended: false };
    return { format: 'ndjson', header, entries: version2(next, state), ended: () => state.ended };
  }

  // Not a header line: the whole input must be one JSON document, an object.
  const notAnExport = (why: string) =>
    new ImportInputError(
      `The input is not a Session Desk export: neither NDJSON that starts with a header line nor a JSON ` +
        `document (${why}).`,
    );
  if (!firstLine.trimStart().startsWith('{')) throw notAnExport('it does not start with "{"');
  let text = firstLine;
  for (let line = await next(); line !== null; line = await next()) {
    if (line.text instanceof LineTooLong) throw tooLong(line.text);
    if (text.length + line.text.length + 1 > JSON_DOCUMENT_MAX_CHARS) {
      throw new ImportInputError(
        `The input is a JSON document over ${JSON_DOCUMENT_MAX_CHARS / 2 ** 20} MiB, too large to read ` +
          'whole: export the workspace as NDJSON (the default), which is read line by line.',
      );
    }
    text += `\n${line.text}`;
  }
  const whole = parseJson(text);
  if (!whole.ok) throw notAnExport(whole.why);
  if (!isObject(whole.value) || !Array.isArray(whole.value.sessions)) {
    throw new ImportInputError('The input is not a Session Desk export: no header and no "sessions" array.');
  }
  const { sessions, ...rest } = whole.value;
  const header = parseHeader(rest);
  async function* json(): AsyncGenerator<Entry> {
    let index = 0;
    for (const value of sessions as unknown[]) {
      index += 1;
      const at = `session ${index}`;
      const checked = wholeSession(value);
      yield checked.ok
        ? { kind: 'session', at, order: index, session: checked.session }
        : { kind: 'skip', at, order: index, reason: checked.why, isSession: true };
    }
  }
  return { format: 'json', header, entries: json(), ended: () => null };
}
