import type { Logger } from '../../clock.js';
import { bootId, startTimeOf } from '../../store/lock.js';
import type { AgentProcess } from '../../store/runs.js';
import { endGroup, groupAlive, STOP_GRACE_MS } from './process-group.js';
import { processesWorkingIn, signalEach, stillRunning } from './process-tree.js';

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
 * to be theirs, and the processes still working in those sessions' folders (tools that left
 * the group; in an operating-system sandbox nothing outlives the server); waits until they
 * are gone. Returns the sessions whose processes were ended.
 */
export async function endOrphans(
  recorded: AgentProcess[],
  logger: Logger,
  folderOf: (sessionId: string) => string,
): Promise<Set<string>> {
  const ended = new Set<string>();
  await Promise.all(
    recorded.map(async (orphan) => {
      const strays = processesWorkingIn(folderOf(orphan.sessionId));
      const group = stillOurs(orphan);
      if (!group && strays.length === 0) return;
      logger.warn(
        `The agent of session ${orphan.sessionId} (process group ${orphan.pgid}) outlived the last run of Session Desk; ending it.`,
      );
      signalEach(strays, 'SIGTERM');
      if (group) await endGroup(orphan.pgid);
      const until = Date.now() + STOP_GRACE_MS;
      while (Date.now() < until && strays.some(stillRunning)) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      signalEach(strays, 'SIGKILL');
      ended.add(orphan.sessionId);
    }),
  );
  return ended;
}
