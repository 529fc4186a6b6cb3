/**
 * Reads until `ok` holds of what was read, or `ms` have passed; returns the last value read,
 * for the caller to assert on (a timeout is then a failed assertion that shows the value).
 */
export async function until<T>(
  read: () => Promise<T> | T,
  ok: (value: T) => boolean,
  ms = 10_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
