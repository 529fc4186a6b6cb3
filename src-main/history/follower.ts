import { describeError } from '../store/errors.js';
import { watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../clock.js';
import { importSource, type ScanBudget, type SourceCounts } from './importer.js';
import { type HistoryDeps } from './history-deps.js';

/** The periodic rescan: a safety net for changes fs.watch misses (and for status turning stale). */
export const RESCAN_MS = 2_000;
/** Smaller batches than the command's: each is one write, so the event loop is never held long. */
export const FOLLOW_BATCH_BYTES = 256 * 1024;
/**
 * How long one scan reads before it ends and another starts (newest files first): a first
 * import of GBs goes on in scans of this length, and a line appended meanwhile to a session is
 * read at the start of the next.
 */
export const SCAN_BUDGET_MS = 2_000;

/**
 * Follows the remembered sources of every workspace in a running server: each root is watched
 * (fs.watch, recursive) and rescanned every RESCAN_MS, and a change imports what the files
 * gained, one source at a time, so a new or appended session file is in the API within seconds.
 * Paused sources are left alone; sources added later (by the command through this server) are
 * picked up at the next scan.
 */
export function createHistoryFollower(deps: HistoryDeps & { logger: Logger }) {
  const watchers = new Map<string, FSWatcher>();
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let again = false;
  let closed = false;
  /** What was said about entries not read: each is said once, not at every scan. */
  const noted = new Set<string>();

  /** Logs the entries of a source's folder that a scan did not read, each once. */
  function noteSkipped(rootDir: string, counts: SourceCounts): void {
    if (noted.size > 10_000) noted.clear();
    const lines = counts.skipped.map((skip) => `${join(rootDir, skip.path)} was not read: ${skip.reason}`);
    const unnamed = counts.skippedCount - counts.skipped.length;
    if (unnamed > 0) lines.push(`${unnamed} more entries of ${rootDir} were not read`);
    for (const line of lines) {
      if (noted.has(line)) continue;
      noted.add(line);
      deps.logger.warn(`History: ${line}`);
    }
  }

  async function watchRoots(): Promise<void> {
    const roots = new Set(
      (await deps.storage.repos.history.sources()).filter((s) => !s.paused).map((s) => s.rootDir),
    );
    for (const [root, watcher] of watchers) {
      if (!roots.has(root)) {
        watcher.close();
        watchers.delete(root);
      }
    }
    for (const root of roots) {
      if (watchers.has(root)) continue;
      try {
        const watcher = watch(root, { recursive: true, persistent: false }, () => scan());
        watcher.on('error', () => {
          watcher.close();
          watchers.delete(root);
        });
        watchers.set(root, watcher);
      } catch {
        // A root that cannot be watched (gone for now) is still rescanned.
      }
    }
  }

  async function scanOnce(): Promise<void> {
    await watchRoots();
    const budget = { until: Date.now() + SCAN_BUDGET_MS, stopped: false };
    await scanFollowedSources(deps, { budget, stopping: () => closed, noteSkipped });
    // Out of time with files left to read: the next scan starts at once, newest files first.
    if (budget.stopped) again = true;
  }

  /** Scans now, or once more after the scan going on (never two at once). */
  function scan(): void {
    if (closed) return;
    if (running) {
      again = true;
      return;
    }
    // A scan that fails (the database went away, a folder vanished) is told and tried again
    // at the next one: never a rejection no one handles, which would end the server.
    running = scanOnce()
      .catch((err: unknown) =>
        deps.logger.warn(`Following the agent CLIs' history failed: ${describeError(err)}`),
      )
      .finally(() => {
        running = null;
        if (again) {
          again = false;
          scan();
        }
      });
  }

  return {
    start(): void {
      scan();
      timer = setInterval(scan, RESCAN_MS);
      timer.unref();
    },
    async close(): Promise<void> {
      closed = true;
      if (timer) clearInterval(timer);
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
      await running;
    },
  };
}
export type HistoryFollower = ReturnType<typeof createHistoryFollower>;

/**
 * One scan of every followed source that is not paused, as the follower makes it: what the
 * files gained is read, and a session whose file went quiet (ACTIVE_WITHIN_MS) is settled. A
 * command that works on a data directory no server holds (`push`) makes one first, so that it
 * finds what a running server would hold by now, not a session left "active" since its import.
 */
export async function scanFollowedSources(
  deps: HistoryDeps & { logger: Logger },
  options: {
    budget?: ScanBudget;
    turnMs?: number;
    stopping?: () => boolean;
    noteSkipped?: (rootDir: string, counts: SourceCounts) => void;
  } = {},
): Promise<void> {
  for (const source of await deps.storage.repos.history.sources()) {
    if (options.stopping?.()) return;
    if (source.paused) continue;
    try {
      const counts = await importSource(deps, source, {
        batchBytes: FOLLOW_BATCH_BYTES,
        quiet: true,
        ...(options.budget ? { budget: options.budget } : {}),
        ...(options.turnMs === undefined ? {} : { turnMs: options.turnMs }),
      });
      options.noteSkipped?.(source.rootDir, counts);
    } catch (err) {
      deps.logger.warn(`History import of ${source.rootDir} failed: ${(err as Error).message}`);
    }
  }
}
