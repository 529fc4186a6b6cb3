/** One line of a unified diff, as the Changes view shows it and review comments name it. */
export interface PatchLine {
  kind: 'meta' | 'hunk' | 'add' | 'del' | 'context' | 'note';
  text: string;
  /** Line numbers on the base and in the sandbox, where the line has one. */
  oldLine?: number;
  newLine?: number;
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/u;
/** Header lines that only repeat the file's path or name its blobs: the file's row says it. */
const REDUNDANT_HEADER = /^(?:diff --git |index |--- |\+\+\+ )/u;

/**
 * Reads git's patch of one file into lines with their kind and numbers. Until the first hunk
 * every line is header (`---`/`+++` there are file names, not removed or added lines); of the
 * header only what says more than the row above it (modes, renames, "Binary files differ") is kept.
 */
export function patchLines(patch: string): PatchLine[] {
  const lines = patch.endsWith('\n') ? patch.slice(0, -1).split('\n') : patch.split('\n');
  const out: PatchLine[] = [];
  let inHunks = false;
  let oldLine = 0;
  let newLine = 0;
  for (const text of lines) {
    const hunk = HUNK.exec(text);
    if (hunk) {
      inHunks = true;
      oldLine = Number(hunk[1]);
      newLine = Number(hunk[2]);
      out.push({ kind: 'hunk', text });
    } else if (!inHunks) {
      if (!REDUNDANT_HEADER.test(text)) out.push({ kind: 'meta', text });
    } else if (text.startsWith('+')) {
      out.push({ kind: 'add', text, newLine: newLine++ });
    } else if (text.startsWith('-')) {
      out.push({ kind: 'del', text, oldLine: oldLine++ });
    } else if (text.startsWith('\\')) {
      out.push({ kind: 'note', text });
    } else {
      out.push({ kind: 'context', text, oldLine: oldLine++, newLine: newLine++ });
    }
  }
  return out;
}
