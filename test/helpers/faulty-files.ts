import { constants } from 'node:os';
import type { FileHandle } from 'node:fs/promises';
import { realFiles, type FileLayer } from '../../src-main/store/file-layer.js';

/** The FileLayer operations a fault can be injected into. */
export type FileOp =
  | 'open'
  | 'write'
  | 'datasync'
  | 'truncate'
  | 'rename'
  | 'unlink'
  | 'read'
  | 'readFile'
  | 'size'
  | 'mkdir'
  | 'syncDirOf';
export type Errno = 'ENOSPC' | 'EIO' | 'EPERM';
export const ERRNOS: readonly Errno[] = ['ENOSPC', 'EIO', 'EPERM'];

export interface FaultRule {
  /** One operation, or several failing together (a disk that refuses everything). */
  op: FileOp | readonly FileOp[];
  code: Errno;
  /**
   * Only calls about a matching path: the file a handle was opened on (write, datasync,
   * truncate), the source of a rename, the path given to the others.
   */
  path?: RegExp;
  /** Only opens with these flags (e.g. 'wx': a file being created). */
  flags?: 'r' | 'r+' | 'wx';
  /** Fail from the n-th matching call on (1-based); unset, from the next one. */
  nth?: number;
  /** How many matching calls fail: with `nth` 1 by default, otherwise until `clear()`. */
  times?: number;
  /** A failing write first writes half its bytes, as a disk that fills up mid-write does. */
  partial?: boolean;
  /** A failing call first waits for this, as a disk that stalls before it errs does. */
  until?: Promise<unknown>;
}

export interface FileCall {
  op: FileOp;
  path: string;
  failed?: Errno;
}

/** A FileLayer that fails chosen operations with a chosen errno, for tests. */
export interface FaultyFiles extends FileLayer {
  /** Arms a fault (replacing any armed one). */
  fail(rule: FaultRule): void;
  /** Disarms the fault: the disk works again. */
  clear(): void;
  /** Whether a fault is armed and has calls left to fail. */
  readonly armed: boolean;
  /** How many calls have been failed so far, over every rule armed. */
  readonly injected: number;
  /** Every call, in order (reads included). */
  readonly calls: FileCall[];
  /** Resolves once no operation has been in flight for `quietMs`: the store is at rest. */
  idle(quietMs?: number): Promise<void>;
}

function errnoError(code: Errno, op: FileOp, path: string): NodeJS.ErrnoException {
  const messages: Record<Errno, string> = {
    ENOSPC: 'no space left on device',
    EIO: 'i/o error',
    EPERM: 'operation not permitted',
  };
  return Object.assign(new Error(`${code}: ${messages[code]} (injected), ${op} '${path}'`), {
    code,
    errno: -constants.errno[code],
    syscall: op,
    path,
  });
}

export function faultyFiles(base: FileLayer = realFiles): FaultyFiles {
  const handlePaths = new WeakMap<FileHandle, string>();
  const calls: FileCall[] = [];
  let rule: FaultRule | null = null;
  let seen = 0;
  let failedByRule = 0;
  let injected = 0;
  let inFlight = 0;
  let lastActivity = Date.now();

  const pathOf = (handle: FileHandle) => handlePaths.get(handle) ?? '<unknown handle>';

  /** Counts the call and says whether it must fail. */
  function check(op: FileOp, path: string, flags?: string): Errno | null {
    const call: FileCall = { op, path };
    calls.push(call);
    if (!rule || !(typeof rule.op === 'string' ? rule.op === op : rule.op.includes(op))) return null;
    if (rule.path && !rule.path.test(path)) return null;
    if (rule.flags && rule.flags !== flags) return null;
    seen += 1;
    const from = rule.nth ?? 1;
    const times = rule.times ?? (rule.nth === undefined ? Infinity : 1);
    if (seen < from || failedByRule >= times) return null;
    failedByRule += 1;
    injected += 1;
    call.failed = rule.code;
    return rule.code;
  }

  /** Fails a call that `check` refused, once the rule's `until` (if any) has settled. */
  async function refuse(code: Errno, op: FileOp, path: string): Promise<never> {
    // Read before the first await: the rule may be replaced while the call waits.
    const until = rule?.until;
    await until?.catch(() => undefined);
    throw errnoError(code, op, path);
  }

  async function tracked<T>(work: () => Promise<T>): Promise<T> {
    inFlight += 1;
    try {
      return await work();
    } finally {
      inFlight -= 1;
      lastActivity = Date.now();
    }
  }

  return {
    fail(next) {
      rule = next;
      seen = 0;
      failedByRule = 0;
    },
    clear() {
      rule = null;
    },
    get armed() {
      if (!rule) return false;
      const times = rule.times ?? (rule.nth === undefined ? Infinity : 1);
      return failedByRule < times;
    },
    get injected() {
      return injected;
    },
    calls,
    async idle(quietMs = 30) {
      for (;;) {
        const quietFor = Date.now() - lastActivity;
        if (inFlight === 0 && quietFor >= quietMs) return;
        await new Promise((resolve) => setTimeout(resolve, Math.max(5, quietMs - quietFor)));
      }
    },

    open: (path, flags) =>
      tracked(async () => {
        const code = check('open', path, flags);
        if (code) return refuse(code, 'open', path);
        const handle = await base.open(path, flags);
        handlePaths.set(handle, path);
        return handle;
      }),
    write: (handle, data, position) =>
      tracked(async () => {
        const path = pathOf(handle);
        const code = check('write', path);
        if (code) {
          if (rule?.partial && data.length > 1) {
            await base.write(handle, data.subarray(0, Math.floor(data.length / 2)), position);
          }
          return refuse(code, 'write', path);
        }
        return base.write(handle, data, position);
      }),
    datasync: (handle) =>
      tracked(async () => {
        const code = check('datasync', pathOf(handle));
        if (code) return refuse(code, 'datasync', pathOf(handle));
        return base.datasync(handle);
      }),
    truncate: (handle, length) =>
      tracked(async () => {
        const code = check('truncate', pathOf(handle));
        if (code) return refuse(code, 'truncate', pathOf(handle));
        return base.truncate(handle, length);
      }),
    rename: (from, to) =>
      tracked(async () => {
        const code = check('rename', from);
        if (code) return refuse(code, 'rename', from);
        return base.rename(from, to);
      }),
    unlink: (path) =>
      tracked(async () => {
        const code = check('unlink', path);
        if (code) return refuse(code, 'unlink', path);
        return base.unlink(path);
      }),
    readFile: (path) =>
      tracked(async () => {
        const code = check('readFile', path);
        if (code) return refuse(code, 'readFile', path);
        return base.readFile(path);
      }),
    read: (handle, buffer, position) =>
      tracked(async () => {
        const code = check('read', pathOf(handle));
        if (code) throw errnoError(code, 'read', pathOf(handle));
        return base.read(handle, buffer, position);
      }),
    size: (path) =>
      tracked(async () => {
        const code = check('size', path);
        if (code) throw errnoError(code, 'size', path);
        return base.size(path);
      }),
    mkdir: (path) =>
      tracked(async () => {
        const code = check('mkdir', path);
        if (code) throw errnoError(code, 'mkdir', path);
        return base.mkdir(path);
      }),
    readdir: (dir) => tracked(() => base.readdir(dir)),
    syncDirOf: (path) =>
      tracked(async () => {
        const code = check('syncDirOf', path);
        if (code) return refuse(code, 'syncDirOf', path);
        return base.syncDirOf(path);
      }),
  };
}
