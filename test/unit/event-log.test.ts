import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { steppableClock } from '../../src-main/clock.js';
import { createEventLog, type LogFormat, type LogLevel } from '../../src-main/event-log.js';

function logTo(level: LogLevel, format: LogFormat) {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (d: Buffer) => (text += d.toString()));
  const clock = steppableClock('2026-03-04T05:06:07.089Z');
  return { log: createEventLog({ level, format, stream, clock }), clock, text: () => text };
}

describe('the server log', () => {
  it('pretty: local time, the message, a label for warnings and errors, nothing below the level', () => {
    const { log, clock, text } = logTo('info', 'pretty');
    log.debug('GET /api/sessions 200 3 ms');
    log.info('session ses_1 created by ann@example.test (demo)', { event: 'session.created' });
    log.warn('session ses_1 failed: no agent');
    log.error('GET /x failed');
    const time = clock.now().toTimeString().slice(0, 8);
    expect(text()).toBe(
      `${time} session ses_1 created by ann@example.test (demo)\n` +
        `${time} warning: session ses_1 failed: no agent\n` +
        `${time} error: GET /x failed\n`,
    );
  });

  it('pretty: a value with line breaks or terminal escapes cannot forge a line of its own', () => {
    const { log, text } = logTo('debug', 'pretty');
    log.info('sign-in failed for a@b\n12:00:00 session ses_x created\u001b[2J\u009b');
    expect(text().split('\n')).toHaveLength(2);
    const controls = [...text()].filter((c) => c !== '\n' && (c < ' ' || (c >= '\u007f' && c <= '\u009f')));
    expect(controls).toEqual([]);
  });

  it('json: one object per line with the ISO time, the level, the message and the fields', () => {
    const { log, text } = logTo('debug', 'json');
    log.debug('GET /api/sessions 200 3 ms', { event: 'request', status: 200 });
    log.info('line\nbreak');
    expect(
      text()
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as unknown),
    ).toEqual([
      {
        time: '2026-03-04T05:06:07.089Z',
        level: 'debug',
        msg: 'GET /api/sessions 200 3 ms',
        event: 'request',
        status: 200,
      },
      { time: '2026-03-04T05:06:07.089Z', level: 'info', msg: 'line\nbreak' },
    ]);
  });

  it('silent tells nothing', () => {
    const { log, text } = logTo('silent', 'json');
    log.error('anything');
    expect(text()).toBe('');
  });
});
