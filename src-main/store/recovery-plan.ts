import { join } from 'node:path';
import type { JournalDamage } from './journal.js';
import type { JournalScan } from './journal-reader.js';

/**
 * What opening a data directory does with what is on disk, decided in one place: which
 * snapshot to load, which journals to replay, which tail to cut, what is damaged and whether
 * the directory may be opened at all. A pure function of what was found, so the store (which
 * carries it out) and `sessiondesk doctor` (which reports it, and repairs by opening with
 * `cutDamagedJournals`) can never disagree.
 *
 * It is asked again after each file it names in `next` has been read: snapshots are checked
 * newest first until one can be loaded, then the journals after it are read in order until
 * one is damaged, so nothing is read that the outcome does not depend on.
 */

export const pad = (generation: number) => String(generation).padStart(12, '0');
export const snapshotName = (g: number) => `snapshot-${pad(g)}.db`;
export const snapshotMetaName = (g: number) => `snapshot-${pad(g)}.json`;
export const journalName = (g: number) => `journal-${pad(g)}.log`;
const FILE_PATTERN = /^(snapshot|journal)-(\d{12})\.(db|json|log)$/u;

/** The generations among the names of a data directory's files. */
export function scanNames(names: string[]): { snapshots: number[]; journals: number[]; metas: Set<number> } {
  const snapshots: number[] = [];
  const journals: number[] = [];
  const metas = new Set<number>();
  for (const name of names) {
    const match = FILE_PATTERN.exec(name);
    if (!match) continue;
    const generation = Number(match[2]);
    if (match[3] === 'db') snapshots.push(generation);
    else if (match[3] === 'json') metas.add(generation);
    else journals.push(generation);
  }
  const byNumber = (a: number, b: number) => a - b;
  return { snapshots: snapshots.sort(byNumber), journals: journals.sort(byNumber), metas };
}

/** A snapshot's checks: its size and checksum, and whether SQLite opens it. */
export type SnapshotCheck = { ok: true } | { ok: false; why: string };

export interface RecoveryInput {
  dataDir: string;
  names: string[];
  snapshots: Map<number, SnapshotCheck>;
  /** Journals read, with their records replayed on top of the loaded snapshot. */
  journals: Map<number, JournalScan>;
  /** `sessiondesk doctor --repair`: cut a journal damaged before its end, losing what follows. */
  cutDamagedJournals: boolean;
}

export type Damage =
  | { kind: 'snapshot'; generation: number; why: string }
  /** No snapshot can be loaded and the journals do not reach back to the start. */
  | { kind: 'no-base' }
  | { kind: 'journal-missing'; generation: number }
  | {
      kind: 'journal';
      generation: number;
      damage: JournalDamage;
      /** Intact records before the damage. */
      records: number;
      /** The newest journal: a torn tail of it is an append a crash cut off. */
      newest: boolean;
      /** The journals after it, which cannot be replayed on top of it. */
      later: number[];
    };

export interface RecoveryPlan {
  /** The file to read before the plan is final; null once it is. */
  next: { kind: 'snapshot' | 'journal'; generation: number } | null;
  /** The snapshot to load, or null for an empty database. */
  load: number | null;
  /** Damaged snapshots newer than the one loaded: set aside (`*.damaged-*`). */
  setAsideSnapshots: Array<{ generation: number; why: string }>;
  /** The journals replayed on top of `load`, in order. */
  replay: number[];
  /** A journal cut after its last intact record; a copy of the whole file is kept (`*.cut-*`). */
  cut: { generation: number; at: number } | null;
  /** Journals set aside (`*.damaged-*`) after a damaged journal that is cut. */
  setAsideJournals: number[];
  /** Nothing of a database is here yet: the first start creates it. */
  fresh: boolean;
  /** Why the directory must not be opened (a DataDamagedError's message); null when it may. */
  refuse: string | null;
  /** Where appends continue: the last journal replayed, after its intact records. */
  append: { generation: number; intactLength: number; exists: boolean };
  /** Bytes of the journals replayed before the newest one (counted toward the next snapshot). */
  olderJournalBytes: number;
  damage: Damage[];
}

export function recoveryPlan(input: RecoveryInput): RecoveryPlan {
  const { dataDir } = input;
  const found = scanNames(input.names);
  const plan: RecoveryPlan = {
    next: null,
    load: null,
    setAsideSnapshots: [],
    replay: [],
    cut: null,
    setAsideJournals: [],
    refuse: null,
    fresh: false,
    append: { generation: 0, intactLength: 0, exists: false },
    olderJournalBytes: 0,
    damage: [],
  };

  // Snapshots, newest first: the first that can be loaded is the base.
  for (const generation of [...found.snapshots].reverse()) {
    const check = input.snapshots.get(generation);
    if (!check) {
      plan.next = { kind: 'snapshot', generation };
      return plan;
    }
    if (check.ok) {
      plan.load = generation;
      break;
    }
    plan.setAsideSnapshots.push({ generation, why: check.why });
    plan.damage.push({ kind: 'snapshot', generation, why: check.why });
  }

  const base = plan.load ?? 0;
  const chain = found.journals.filter((g) => g >= base);
  plan.append = { generation: base, intactLength: 0, exists: false };
  // A snapshot kept aside at an earlier start, or a checksum file, also means data was here:
  // the directory must not be taken for a new one.
  const dataWasHere =
    found.snapshots.length > 0 ||
    found.journals.length > 0 ||
    found.metas.size > 0 ||
    input.names.some((name) => name.includes('.damaged-'));
  plan.fresh = !dataWasHere;
  if (plan.load === null) {
    if (dataWasHere && chain[0] !== 0) {
      plan.damage.push({ kind: 'no-base' });
      plan.refuse =
        `No intact snapshot in ${dataDir}, and the journals do not reach back to the start, so the ` +
        'data cannot be rebuilt. Damaged files were kept aside (*.damaged-*); restore a backup ' +
        'of the data directory.';
      return plan;
    }
  }

  for (let i = 0; i < chain.length; i += 1) {
    const generation = chain[i] as number;
    if (generation !== base + i) {
      plan.damage.push({ kind: 'journal-missing', generation: base + i });
      plan.refuse =
        `${join(dataDir, journalName(base + i))} is missing, so later writes cannot be replayed. Restore a ` +
        'backup of the data directory.';
      return plan;
    }
    const scan = input.journals.get(generation);
    if (!scan) {
      plan.next = { kind: 'journal', generation };
      return plan;
    }
    plan.replay.push(generation);
    if (i > 0) plan.olderJournalBytes += plan.append.intactLength;
    plan.append = { generation, intactLength: scan.intactLength, exists: true };
    const damage = scan.damage;
    if (!damage) continue;

    const newest = i === chain.length - 1;
    const later = chain.slice(i + 1);
    plan.damage.push({ kind: 'journal', generation, damage, records: scan.records, newest, later });
    const path = join(dataDir, journalName(generation));
    // Only an append a crash cut off may be cut without asking: anything else may be
    // followed by acknowledged writes, here or in the journals after this one.
    if ((newest && damage.torn) || input.cutDamagedJournals) {
      plan.cut = { generation, at: scan.intactLength };
      plan.setAsideJournals = later;
    } else {
      const after = newest
        ? `the ${damage.bytes} bytes from there on`
        : `the journals after it (${later.map(journalName).join(', ')})`;
      plan.refuse =
        `${path}: ${damage.reason} at byte ${damage.offset}. The writes in ${after} cannot be replayed, ` +
        'so the data directory was not opened and the journals were left as they are. Run ' +
        '"sessiondesk doctor" to see what is affected, then restore a backup, or run ' +
        '"sessiondesk doctor --repair" to keep only what comes before the damage.';
    }
    break;
  }
  return plan;
}
