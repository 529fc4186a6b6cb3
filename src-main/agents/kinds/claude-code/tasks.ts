import type { Task } from '../../../../src-shared/sessions.js';
import { todosToTasks } from './stream-json.js';

const STATUSES = new Set<string>(['pending', 'in_progress', 'completed']);

type Input = Record<string, unknown> | null;

/** A task tool call the CLI has not answered yet. */
export interface WaitingCall {
  name: string;
  input: unknown;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * Claude Code's task list. Older versions send the whole list with `TodoWrite`; current ones
 * build it with `TaskCreate` (the id arrives in the tool's result) and `TaskUpdate` (by id).
 * A call changes the list only once the CLI has accepted it (its result is not an error): a
 * call it refuses, such as a todo with a status it does not know, changes nothing.
 * `toolResult` returns the new list, or null when the call changed nothing.
 */
export class ClaudeTaskList {
  private tasks: Task[];
  /** Task calls waiting for their results, by tool_use id. */
  private readonly waiting = new Map<string, WaitingCall>();

  /** `waiting`: what `waitingCalls()` gave, for a reader that carries on later. */
  constructor(tasks: Task[] = [], waiting: [string, WaitingCall][] = []) {
    this.tasks = tasks;
    for (const [id, call] of waiting) this.waiting.set(id, call);
  }

  waitingCalls(): [string, WaitingCall][] {
    return [...this.waiting];
  }

  get current(): Task[] {
    return this.tasks;
  }

  replace(tasks: Task[]): Task[] {
    this.tasks = tasks;
    return tasks;
  }

  /** A tool call as the model made it: a task call waits for the CLI's answer. */
  toolUse(id: string, name: string, input: unknown): void {
    if (name === 'TodoWrite' || name === 'TaskCreate' || name === 'TaskUpdate') {
      this.waiting.set(id, { name, input });
    }
  }

  /**
   * A tool call's result. A created task's id comes from the structured result, else from the
   * text ("Task #3 created successfully"), else it is the next number, as the CLI counts.
   */
  toolResult(toolUseId: string, content: unknown, structured: unknown, isError: boolean): Task[] | null {
    const call = this.waiting.get(toolUseId);
    if (call === undefined) return null;
    this.waiting.delete(toolUseId);
    if (isError) return null;
    if (call.name === 'TodoWrite') {
      const tasks = todosToTasks(call.input);
      return tasks ? this.replace(tasks) : null;
    }
    const fields = (typeof call.input === 'object' ? call.input : null) as Input;
    if (call.name === 'TaskUpdate') return this.update(fields);
    const subject = str(fields?.subject);
    if (!subject) return null;
    const task = (structured as { task?: { id?: unknown } } | null)?.task;
    const fromText = typeof content === 'string' ? /Task #(\S+) created/u.exec(content)?.[1] : undefined;
    const id = str(task?.id) ?? fromText ?? String(this.tasks.length + 1);
    this.tasks = [...this.tasks.filter((t) => t.id !== id), { id, title: subject, status: 'pending' }];
    return this.tasks;
  }

  private update(fields: Input): Task[] | null {
    const id = str(fields?.taskId);
    const index = this.tasks.findIndex((t) => t.id === id);
    if (index < 0) return null;
    if (fields?.status === 'deleted') {
      this.tasks = this.tasks.filter((_, i) => i !== index);
      return this.tasks;
    }
    const before = this.tasks[index]!;
    const status =
      typeof fields?.status === 'string' && STATUSES.has(fields.status) ? fields.status : before.status;
    const after: Task = {
      ...before,
      title: str(fields?.subject) ?? before.title,
      status: status as Task['status'],
    };
    if (after.title === before.title && after.status === before.status) return null;
    this.tasks = this.tasks.map((t, i) => (i === index ? after : t));
    return this.tasks;
  }
}
