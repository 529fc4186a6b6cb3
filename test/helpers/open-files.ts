import { readdirSync, readlinkSync } from 'node:fs';

/** The files under `dir` this process holds open now (Linux: /proc/self/fd). */
export function openFilesUnder(dir: string): string[] {
  return readdirSync('/proc/self/fd')
    .map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return '';
      }
    })
    .filter((target) => target.startsWith(dir))
    .sort();
}
