import { realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';

/** Whether `child` is `parent` or lies in it, as written. */
export function isInside(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** The path with its symbolic links resolved; as written (absolute) when it does not exist. */
export function realOf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}
