/**
 * How deep a value that agents wrote (a message, a tool's input) may nest arrays and objects to
 * be stored: deeper than any agent's real output, and shallow enough for every reader
 * (`JSON.stringify`, the dashboard's views) to walk it. Deeper values are refused, never cut.
 */
export const MAX_JSON_DEPTH = 64;

export const TOO_DEEP_MESSAGE = `is nested more than ${MAX_JSON_DEPTH} levels deep (arrays and objects within each other)`;

/** Whether `value` nests arrays and objects more than `max` levels; walked without recursion. */
export function nestedDeeperThan(value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  const stack: Array<[object, number]> = [];
  if (value !== null && typeof value === 'object') stack.push([value, 1]);
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [node, depth] = next;
    if (depth > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') stack.push([child as object, depth + 1]);
    }
  }
  return false;
}
