/**
 * The text of a message that search reads: every string in it (the prompt, answers, thinking,
 * tool inputs and outputs, results) but the few that only name things (`type`, ids).
 */
export const STRUCTURAL_KEYS: ReadonlySet<string> = new Set([
  'type',
  'id',
  'tool_use_id',
  'subtype',
  'signature',
  'uuid',
  'parent_tool_use_id',
]);

export function searchableText(message: unknown): string {
  const parts: string[] = [];
  const walk = (value: unknown, key: string | null): void => {
    if (typeof value === 'string') {
      if (key === null || !STRUCTURAL_KEYS.has(key)) parts.push(value);
    } else if (Array.isArray(value)) {
      for (const item of value) walk(item, null);
    } else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) walk(v, k);
    }
  };
  walk(message, null);
  return parts.join('\n');
}

/**
 * A message's text is indexed in pieces of about this many characters, so that one huge tool
 * output is never tokenized in one step (which would hold the event loop).
 */
export const CHUNK_CHARS = 32 * 1024;
/** Pieces a message may have: rowids leave room for this many (a message is at most 16 MiB). */
export const MAX_CHUNKS = 512;

/** Cuts text into pieces at whitespace near CHUNK_CHARS, so words stay whole. */
export function chunks(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < text.length && out.length < MAX_CHUNKS - 1) {
    let end = Math.min(text.length, start + CHUNK_CHARS);
    if (end < text.length) {
      const space = text.lastIndexOf(' ', end);
      const newline = text.lastIndexOf('\n', end);
      const cut = Math.max(space, newline);
      if (cut > start + CHUNK_CHARS / 2) end = cut;
    }
    out.push(text.slice(start, end));
    start = end;
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}
