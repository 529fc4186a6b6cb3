import type { ChangedFile } from '../../src-shared/changes.js';

/**
 * Reads the output of `git diff --raw --numstat -z -p` as it arrives, in one pass and in
 * bounded memory: first a raw record per file (status and modes), then a numstat record per
 * file (exact line counts), then an empty record, then the patches, one `diff --git` section
 * per file in the raw records' order. Patches are kept up to a cap per file and in all; once
 * nothing more would be kept, `onEnough` says git may stop.
 */
export interface DiffCaps {
  files: number;
  filePatchBytes: number;
  totalPatchBytes: number;
}

export interface ParsedDiff {
  files: ChangedFile[];
  totals: { files: number; additions: number; deletions: number };
  truncated: boolean;
}

const SECTION_MARKER = Buffer.from('diff --git ');
/** A record of the raw or numstat part is a path at most; anything longer is not git's output. */
const RECORD_MAX_BYTES = 1024 * 1024;

const KIND_BY_MODE: Record<string, ChangedFile['kind']> = { '120000': 'symlink', '160000': 'submodule' };

function statusOf(letter: string): ChangedFile['status'] {
  if (letter === 'A') return 'added';
  if (letter === 'D') return 'deleted';
  if (letter === 'R') return 'renamed';
  // M, T (a file became a link or back), U (unmerged) and anything newer read as modified.
  return 'modified';
}

export class DiffOutputParser {
  private phase: 'raw' | 'numstat' | 'patch' = 'raw';
  private carry: Buffer = Buffer.alloc(0);
  private readonly files: ChangedFile[] = [];
  private rawCount = 0;
  private numstatCount = 0;
  private readonly totals = { additions: 0, deletions: 0 };
  /** A record whose paths are still to come: the raw status line, or numstat counts. */
  private pending: { kind: 'raw' | 'numstat'; head: string; paths: string[]; need: number } | null = null;

  // The patch part.
  private atLineStart = true;
  private section = -1;
  private sectionChunks: Buffer[] = [];
  private sectionSize = 0;
  private sectionLineEnd = 0;
  private sectionLimit = 0;
  private sectionCut = false;
  private patchBytes = 0;
  /** A patch was cut by the cap on all patches: later ones are not read. */
  private totalSpent = false;
  private enough = false;

  constructor(
    private readonly caps: DiffCaps,
    private readonly onEnough: () => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.enough) return;
    const data = this.carry.length === 0 ? chunk : Buffer.concat([this.carry, chunk]);
    this.carry = Buffer.alloc(0);
    if (this.phase === 'patch') this.readPatch(data, 0, false);
    else this.readRecords(data);
  }

  /** After git has exited (or been stopped): the files, their counts and what was cut. */
  finish(): ParsedDiff {
    if (this.phase === 'patch' && !this.enough) this.readPatch(this.carry, 0, true);
    this.endSection();
    if (this.pending || (this.phase !== 'patch' && this.rawCount > 0)) {
      throw new Error('git stopped in the middle of its list of changed files');
    }
    // Files whose section never came (git was stopped once the caps were spent) have no patch.
    for (const file of this.files) if (file.patch === undefined) file.truncated = true;
    return {
      files: this.files,
      totals: { files: this.rawCount, ...this.totals },
      truncated: this.rawCount > this.files.length || this.files.some((f) => f.truncated),
    };
  }

  private readRecords(data: Buffer): void {
    let pos = 0;
    while (pos < data.length) {
      const end = data.indexOf(0, pos);
      if (end < 0) {
        if (data.length - pos > RECORD_MAX_BYTES)
          throw new Error('git printed a record longer than any path');
        this.carry = Buffer.from(data.subarray(pos));
        return;
      }
      const record = data.subarray(pos, end);
      pos = end + 1;
      this.record(record);
      if (this.phase === 'patch') {
        this.readPatch(data, pos, false);
        return;
      }
    }
  }

  private record(bytes: Buffer): void {
    const text = bytes.toString('utf8');
    if (this.pending) {
      this.pending.paths.push(text);
      if (this.pending.paths.length === this.pending.need) {
        const { kind, head, paths } = this.pending;
        this.pending = null;
        if (kind === 'raw') this.rawRecord(head, paths);
        else this.numstatRecord(head, paths);
      }
      return;
    }
    if (this.phase === 'raw' && text.startsWith(':')) {
      // ":<old mode> <new mode> <old sha> <new sha> <status letter><score>", then 1 or 2 paths.
      const letter = text.split(' ')[4]?.[0] ?? 'M';
      this.pending = { kind: 'raw', head: text, paths: [], need: letter === 'R' || letter === 'C' ? 2 : 1 };
      return;
    }
    if (this.phase === 'raw') this.phase = 'numstat';
    if (text === '') {
      this.phase = 'patch';
      return;
    }
    // "<added>\t<deleted>\t<path>", or "<added>\t<deleted>\t" then the old and new paths.
    const second = text.indexOf('\t', text.indexOf('\t') + 1);
    if (second < 0) throw new Error(`git printed an unexpected line count: ${text.slice(0, 80)}`);
    const path = text.slice(second + 1);
    if (path === '') this.pending = { kind: 'numstat', head: text, paths: [], need: 2 };
    else this.numstatRecord(text.slice(0, second), [path]);
  }

  private rawRecord(head: string, paths: string[]): void {
    this.rawCount += 1;
    if (this.files.length >= this.caps.files) return;
    const [oldMode = '', newMode = '', , , letters = 'M'] = head.slice(1).split(' ');
    const status = statusOf(letters[0] ?? 'M');
    const mode = status === 'deleted' ? oldMode : newMode;
    const path = paths.at(-1) ?? '';
    this.files.push({
      path,
      ...(status === 'renamed' ? { oldPath: paths[0] ?? '' } : {}),
      status,
      kind: KIND_BY_MODE[mode] ?? 'file',
      binary: false,
      additions: 0,
      deletions: 0,
      truncated: false,
    });
  }

  private numstatRecord(counts: string, paths: string[]): void {
    const index = this.numstatCount;
    this.numstatCount += 1;
    const [added = '-', deleted = '-'] = counts.split('\t');
    const binary = added === '-';
    const additions = binary ? 0 : Number(added);
    const deletions = binary ? 0 : Number(deleted);
    this.totals.additions += additions;
    this.totals.deletions += deletions;
    // The numstat records come in the raw records' order; the path confirms the pairing.
    const file = this.files[index];
    if (!file) return;
    if (file.path !== paths.at(-1)) throw new Error(`git listed ${file.path} and counted ${paths.at(-1)}`);
    Object.assign(file, { binary, additions, deletions });
  }

  private readPatch(data: Buffer, from: number, final: boolean): void {
    let pos = from;
    while (pos < data.length && !this.enough) {
      if (this.atLineStart) {
        if (!final && data.length - pos < SECTION_MARKER.length) {
          this.carry = Buffer.from(data.subarray(pos));
          return;
        }
        if (data.subarray(pos, pos + SECTION_MARKER.length).equals(SECTION_MARKER)) this.startSection();
        if (this.enough) return;
      }
      const newline = data.indexOf(10, pos);
      const end = newline < 0 ? data.length : newline + 1;
      this.keep(data.subarray(pos, end), newline >= 0);
      this.atLineStart = newline >= 0;
      pos = end;
    }
  }

  private startSection(): void {
    this.endSection();
    this.section += 1;
    if (this.section >= this.files.length) {
      this.stop();
      return;
    }
    this.sectionLimit = Math.min(this.caps.filePatchBytes, this.caps.totalPatchBytes - this.patchBytes);
    if (this.sectionLimit <= 0 || this.totalSpent) this.stop();
  }

  private keep(piece: Buffer, endsLine: boolean): void {
    if (this.section < 0 || this.sectionCut) return;
    if (this.sectionSize + piece.length > this.sectionLimit) {
      this.sectionCut = true;
      return;
    }
    this.sectionChunks.push(Buffer.from(piece));
    this.sectionSize += piece.length;
    if (endsLine) this.sectionLineEnd = this.sectionSize;
  }

  private endSection(): void {
    const file = this.files[this.section];
    if (file && file.patch === undefined && !this.enough) {
      // A cut patch ends at the last whole line kept.
      const text = Buffer.concat(this.sectionChunks).subarray(0, this.sectionLineEnd).toString('utf8');
      file.patch = text;
      file.truncated = this.sectionCut;
      this.patchBytes += this.sectionLineEnd;
      if (this.sectionCut && this.sectionLimit < this.caps.filePatchBytes) this.totalSpent = true;
    }
    this.sectionChunks = [];
    this.sectionSize = 0;
    this.sectionLineEnd = 0;
    this.sectionCut = false;
  }

  private stop(): void {
    if (this.enough) return;
    this.enough = true;
    this.onEnough();
  }
}
