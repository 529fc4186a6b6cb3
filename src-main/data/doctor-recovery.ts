import { journalName, snapshotName, type RecoveryPlan } from '../store/recovery-plan.js';
import type { DoctorReport, Finding } from './doctor-report.js';

/**
 * What the damage to a data directory's snapshots and journals means, in words: each problem
 * the recovery plan found, whether the next start works around it or refuses the directory,
 * and what to do. Apart from the rebuild (doctor.ts), which finds the damage by reading the
 * files: this only explains what it found, and reads nothing.
 */
export function recoveryProblems(
  dataDir: string,
  plan: RecoveryPlan,
  snapshots: DoctorReport['snapshots'],
  journals: DoctorReport['journals'],
): Finding[] {
  const problems: Finding[] = [];
  const baseGeneration = plan.load ?? 0;
  for (const journal of journals) {
    if (journal.generation >= baseGeneration || !journal.damage) continue;
    problems.push({
      subject: journal.name,
      problem: `is damaged at byte ${journal.damage.offset} (${journal.damage.reason})`,
      fix:
        'The data does not need it (it belongs to an older snapshot), and it is removed after the next ' +
        'snapshot. Damage on disk can mean a failing disk: take a backup now (sessiondesk backup).',
    });
  }

  const chain = journals.map((j) => j.generation).filter((g) => g >= baseGeneration);
  for (const snapshot of snapshots) {
    if (snapshot.status === 'ok') continue;
    const fix =
      snapshot.generation < baseGeneration
        ? 'The data does not need it (a newer snapshot is intact), and it is removed after the next ' +
          'snapshot. Damage on disk can mean a failing disk: take a backup now (sessiondesk backup).'
        : plan.load !== null
          ? `Nothing is lost while the journals are intact: the next start sets it aside as ` +
            `${snapshot.name}.damaged-… and rebuilds the data from ${snapshotName(plan.load)} ` +
            'and the journals after it. Take a backup afterwards (sessiondesk backup).'
          : chain[0] === 0
            ? `Nothing is lost while the journals are intact: the next start sets it aside as ` +
              `${snapshot.name}.damaged-… and rebuilds the data from the journals, which reach back to the start.`
            : 'Restore a backup into a new directory (see the problem with the data directory).';
    problems.push({ subject: snapshot.name, problem: `is damaged: ${snapshot.status}`, fix });
  }
  if (plan.damage.some((d) => d.kind === 'no-base')) {
    problems.push({
      subject: dataDir,
      problem:
        'has no intact snapshot, and its journals do not reach back to the start, so the data cannot be ' +
        'rebuilt: the next start refuses to open it',
      fix:
        'Restore a backup into a new directory (sessiondesk restore --input BACKUP --data-dir NEW_DIR) and ' +
        'keep this one as it is.',
    });
  } else if (!plan.fresh) {
    for (const damage of plan.damage) {
      if (damage.kind === 'journal-missing') {
        problems.push({
          subject: journalName(damage.generation),
          problem:
            'is missing, so the writes in it and after it cannot be replayed: the next start refuses to ' +
            'open the directory',
          fix:
            'Put the file back if it was moved. Otherwise restore a backup into a new directory ' +
            '(sessiondesk restore --input BACKUP --data-dir NEW_DIR).',
        });
      } else if (damage.kind === 'journal') {
        const name = journalName(damage.generation);
        const { offset, reason, bytes, torn } = damage.damage;
        if (damage.newest) {
          problems.push(
            torn
              ? {
                  subject: name,
                  problem:
                    `ends with ${bytes} bytes that are not a complete record (${reason} at byte ` +
                    `${offset}): a crash cut off a write before it was acknowledged`,
                  fix:
                    'Start Session Desk once (sessiondesk serve, or any command that opens the directory): it ' +
                    `cuts the tail and keeps a copy of the whole file as ${name}.cut-…. No acknowledged write is lost.`,
                }
              : {
                  subject: name,
                  problem:
                    `is damaged at byte ${offset} (${reason}): the ${damage.records} records before ` +
                    `it are intact, but the ${bytes} bytes from there on may hold acknowledged writes, so ` +
                    'the next start refuses to open the directory',
                  fix:
                    'If the writes after that point matter, restore a backup into a new directory (sessiondesk ' +
                    'restore). Otherwise stop the server and run "sessiondesk doctor --repair": it keeps what is ' +
                    `intact and loses the rest, with a copy of the whole file as ${name}.cut-….`,
                },
          );
        } else {
          problems.push({
            subject: name,
            problem:
              `is damaged at byte ${offset} (${reason}), and the journals after it ` +
              `(${damage.later.map(journalName).join(', ')}) cannot be replayed on top of it: the next start ` +
              'refuses to open the directory',
            fix:
              'If the writes after that point matter, restore a backup into a new directory (sessiondesk ' +
              'restore). Otherwise stop the server and run "sessiondesk doctor --repair": it keeps what is ' +
              'intact and sets the rest aside (*.cut-*, *.damaged-*).',
          });
        }
      }
    }
  }
  return problems;
}
