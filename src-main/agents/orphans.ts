import type { Logger } from '../clock.js';
import { bootId, startTimeOf } from '../store/lock.js';
import type { AgentProcess } from '../store/runs.js';
import { endGroup, groupAlive } from './process-group.js';

/**
 * Whether a recorded process group is still the run's: same boot, and its leader's pid
 * names a process with the recorded start time. A pid given to another process since (or
 * a record that cannot be verified) is never the run's, and is left alone.
 */
export function stillOurs(recorded: AgentProcess): boolean {
  if (recorded.startTime === undefined || recorded.bootId === undefined) return false;
  if (bootId() !== recorded.bootId) return false;
  return startTimeOf(recorded.pgid) === recorded.startTime && groupAlive(recorded.pgid);
}

/**
 * Ends the process groups of runs that a crash of the server left running, once verified
 * to be theirs; waits until they are gone. Returns the sessions whose group was ended.
 */
export async function endOrphans(recorded: AgentProcess[], logger: Logger): Promise<Set<string>> {
  const ended = new Set<string>();
  await Promise.all(
    recorded.map(async (orphan) => {
      if (!stillOurs(orphan)) return;
      logger.warn(
        `The agent of session ${orphan.sessionId} (process group ${orphan.pgid}) outlived the last run of Session Desk; ending it.`,
      );
      await endGroup(orphan.pgid);
      ended.add(orphan.sessionId);
    }),
  );
  return ended;
}
