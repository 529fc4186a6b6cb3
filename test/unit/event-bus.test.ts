import { describe, expect, it } from 'vitest';
import { EventBus, type BusEvent } from '../../src-main/events/event-bus.js';

const tasksChanged = (sessionId: string) => ({ type: 'tasks.changed' as const, sessionId, tasks: [] });

describe('EventBus', () => {
  it('replays what came after an id, in order, while it is still kept', () => {
    const bus = new EventBus(3);
    const heard: BusEvent[] = [];
    bus.subscribe((event) => heard.push(event));
    for (let i = 1; i <= 5; i += 1) bus.publish('w', tasksChanged(`s${i}`));
    const ids = heard.map((e) => e.id);
    expect(heard.map((e) => e.sessionId)).toEqual(['s1', 's2', 's3', 's4', 's5']);
    expect(new Set(ids).size).toBe(5);
    // Kept: the last 3 (events 3, 4 and 5).
    expect(bus.since(ids[1]!)?.map((e) => e.sessionId)).toEqual(['s3', 's4', 's5']);
    expect(bus.since(ids[3]!)?.map((e) => e.sessionId)).toEqual(['s5']);
    expect(bus.since(ids[4]!)).toEqual([]);
    // Event 2 is gone, so what followed event 1 cannot be replayed exactly.
    expect(bus.since(ids[0]!)).toBeNull();
    for (let i = 6; i <= 8; i += 1) bus.publish('w', tasksChanged(`s${i}`));
    expect(bus.since(heard[4]!.id)?.map((e) => e.sessionId)).toEqual(['s6', 's7', 's8']);
    expect(bus.since(heard[3]!.id)).toBeNull();
  });

  it('refuses ids from the future, of another run, or malformed', () => {
    const bus = new EventBus(10);
    const heard: BusEvent[] = [];
    bus.subscribe((event) => heard.push(event));
    bus.publish('w', tasksChanged('s1'));
    const [epoch] = heard[0]!.id.split('-');
    expect(bus.since(`${epoch}-0`)?.map((e) => e.sessionId)).toEqual(['s1']);
    expect(bus.since(`${epoch}-2`)).toBeNull();
    expect(bus.since(`${epoch}x-0`)).toBeNull();
    expect(bus.since('nonsense')).toBeNull();
    expect(bus.since(`${epoch}--1`)).toBeNull();
  });

  it('keeps no more bytes than its budget: big messages push old events out', () => {
    const bus = new EventBus(1000, 10_000);
    const heard: BusEvent[] = [];
    bus.subscribe((event) => heard.push(event));
    const big = (n: number) => ({
      type: 'message.added' as const,
      sessionId: 's',
      index: n,
      message: {
        type: 'assistant' as const,
        message: { content: [{ type: 'text' as const, text: 'x'.repeat(3_000) }] },
      },
    });
    for (let n = 0; n < 10; n += 1) {
      bus.publish('w', big(n));
      expect(bus.kept().bytes).toBeLessThanOrEqual(10_000);
    }
    // Three of about 3 KB fit: the seventh event's successors are replayed, the first's are not.
    expect(bus.kept().events).toBe(3);
    expect(bus.since(heard[6]!.id)?.map((e) => (JSON.parse(e.data) as { index: number }).index)).toEqual([
      7, 8, 9,
    ]);
    expect(bus.since(heard[0]!.id)).toBeNull();
    // One event larger than the whole budget is still delivered, and kept alone.
    bus.publish('w', { ...big(10), message: { type: 'user', message: { content: 'y'.repeat(20_000) } } });
    expect(heard).toHaveLength(11);
    expect(bus.kept().events).toBe(1);
    expect(bus.since(heard[9]!.id)?.map((e) => e.id)).toEqual([heard[10]!.id]);
  });

  it('keeps only what a replay sends: the budget counts all it holds, not half', () => {
    const bus = new EventBus(10);
    const heard: BusEvent[] = [];
    bus.subscribe((event) => heard.push(event));
    bus.publish('w', tasksChanged('s1'));
    // Listeners in this process get the event itself (the relay to other processes reads it).
    expect(heard[0]!.event).toEqual(tasksChanged('s1'));
    const [kept] = bus.since(`${heard[0]!.id.split('-')[0]}-0`) ?? [];
    // A replay gets its JSON, its id, and what streams pick and name it by; the event object
    // (as large again, and not counted in the budget) is not kept.
    expect(kept).toEqual({
      id: heard[0]!.id,
      workspaceId: 'w',
      sessionId: 's1',
      type: 'tasks.changed',
      data: JSON.stringify(tasksChanged('s1')),
    });
    expect(bus.kept().bytes).toBe(kept!.data.length);
  });
});
