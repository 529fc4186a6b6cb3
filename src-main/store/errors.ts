/** Data on disk that cannot be read back as it was written: never answered with an empty store. */
export class DataDamagedError extends Error {}

/** An error as a log line or message shows it: with its system code (ENOSPC, EACCES) when it has one. */
export function describeError(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    return code ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}
