import type { Clock, LogFields, Logger } from './clock.js';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['pretty', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };
const LABEL: Record<Exclude<LogLevel, 'silent'>, string> = {
  debug: '',
  info: '',
  warn: 'warning: ',
  error: 'error: ',
};

function twoDigits(n: number): string {
  return String(n).padStart(2, '0');
}

/** A line break or control character in a value would forge a line of its own. */
function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f]+/gu, ' ');
}

/**
 * The server's log: one line per event, at `level` and above. `pretty` is for a person at a
 * terminal (`12:04:31 session ses_… created by ann@example.com (claude-code)`, local time);
 * `json` is one object per line for programs (`time` in ISO-8601 UTC, `level`, `msg`, and the
 * event's fields). What goes in is ours to choose: never a key, a cookie, a password or a prompt.
 */
export function createEventLog(options: {
  level: LogLevel;
  format: LogFormat;
  stream: NodeJS.WritableStream;
  clock: Clock;
}): Required<Logger> {
  const { format, stream, clock } = options;
  const threshold = RANK[options.level];
  const write = (level: Exclude<LogLevel, 'silent'>, msg: string, fields?: LogFields) => {
    if (RANK[level] < threshold) return;
    const now = clock.now();
    if (format === 'json') {
      stream.write(`${JSON.stringify({ time: now.toISOString(), level, msg, ...fields })}\n`);
      return;
    }
    const time = `${twoDigits(now.getHours())}:${twoDigits(now.getMinutes())}:${twoDigits(now.getSeconds())}`;
    stream.write(`${time} ${LABEL[level]}${oneLine(msg)}\n`);
  };
  return {
    debug: (msg, fields) => write('debug', msg, fields),
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
  };
}
