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
});
