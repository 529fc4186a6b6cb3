import type { Task } from '../../../src-shared/sessions';

/** How a task shows: as the agent left it, or not done once its run is over. */
export type TaskShown = Task['status'] | 'not_done';

export const TASK_MARK: Record<TaskShown, string> = {
  pending: '○',
  in_progress: '◐',
  completed: '●',
  not_done: '✕',
};

export const TASK_LABEL: Record<TaskShown, string> = {
  pending: 'Pending',
  in_progress: 'In progress',
  completed: 'Done',
  not_done: 'Not done',
};

/**
 * Once a run is over, nobody works on the tasks it left pending or in progress any more: the
 * task panel and the transcript's task updates both show them as not done.
 */
export function shownStatus(status: Task['status'], runOver: boolean): TaskShown {
  return runOver && status !== 'completed' ? 'not_done' : status;
}

/**
 * "2 of 4 done", then what is true of the rest: how many are not done once the run left them
 * (`runOver`), else how many are in progress. A list the run went on to update is summed as it
 * stood then, never as "not done": those tasks were done after it.
 */
export function doneSummary(statuses: Task['status'][], runOver: boolean): string {
  const done = statuses.filter((status) => status === 'completed').length;
  const left = statuses.length - done;
  const going = statuses.filter((status) => status === 'in_progress').length;
  const rest = runOver ? (left > 0 ? ` · ${left} not done` : '') : going > 0 ? ` · ${going} in progress` : '';
  return `${done} of ${statuses.length} done${rest}`;
}
