// Handing the event loop a turn from long work on the server's thread: between two stretches
// of work, the loop's timers run and it polls for I/O, wherever the work began (a file read
// completing, a timer, an immediate).
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { handOverTurn, Turns } from '../../src-main/turns.js';
import { ROOT } from '../helpers/cli.js';

/** Holds the thread for `ms`, as parsing a large line does. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/**
 * Runs `stretches` stretches of work of `ms` each, a turn handed over between two, the first one
 * starting where `begin` resolves; counts how many of the gaps between two stretches a timer
 * ticking every millisecond ran in.
 */
async function gapsWithATick(begin: () => Promise<void>, pause: () => Promise<void>, stretches = 6) {
  let ticks = 0;
  const timer = setInterval(() => (ticks += 1), 1);
  try {
    await begin();
    let withTick = 0;
    for (let i = 0; i < stretches; i += 1) {
      const before = ticks;
      busy(5);
      await pause();
      if (i < stretches - 1 && ticks > before) withTick += 1;
    }
    return { gaps: stretches - 1, withTick };
  } finally {
    clearInterval(timer);
  }
}

/** A real file read: the work after it starts in an I/O callback. */
async function afterRead(): Promise<void> {
  const handle = await open(join(ROOT, 'package.json'));
  try {
    await handle.read(Buffer.alloc(64), 0, 64, 0);
  } finally {
    await handle.close();
  }
}

describe('handing the event loop a turn', () => {
  it('lets the timers run before the work goes on, also when the work began in an I/O callback', async () => {
    // Each stretch begins with a read, as the importer's reading of a file does.
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 1);
    let withTick = 0;
    try {
      for (let i = 0; i < 5; i += 1) {
        await afterRead();
        busy(5);
        const before = ticks;
        await handOverTurn();
        if (ticks > before) withTick += 1;
        busy(5);
      }
    } finally {
      clearInterval(timer);
    }
    expect(withTick).toBe(5);
    const fromTimer = await gapsWithATick(
      () => new Promise((resolve) => setTimeout(resolve, 1)),
      handOverTurn,
    );
    expect(fromTimer.withTick).toBe(fromTimer.gaps);
    const fromImmediate = await gapsWithATick(
      () => new Promise((resolve) => setImmediate(resolve)),
      handOverTurn,
    );
    expect(fromImmediate.withTick).toBe(fromImmediate.gaps);
  });

  it('hands one over only once its time is used up', async () => {
    const turns = new Turns(0);
    const used = await gapsWithATick(afterRead, () => turns.pause());
    expect(used.withTick).toBe(used.gaps);
    // A turn longer than the work: it goes on without one.
    const long = new Turns(60_000);
    const unused = await gapsWithATick(afterRead, () => long.pause());
    expect(unused.withTick).toBe(0);
  });
});
