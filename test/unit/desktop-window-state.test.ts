import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_WINDOW_SIZE,
  MIN_WINDOW_SIZE,
  parseWindowState,
  placeWindow,
  readWindowState,
  writeWindowState,
  type WindowState,
} from '../../src-main/desktop/window-state.js';
import { tempDir } from '../helpers/server.js';

const PRIMARY = { x: 0, y: 0, width: 1920, height: 1050 };
const RIGHT = { x: 1920, y: 0, width: 1280, height: 1000 };
const state = (x: number, y: number, width: number, height: number, maximized = false): WindowState => ({
  bounds: { x, y, width, height },
  maximized,
});

describe('window state file', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('round-trips through a JSON file, written atomically', () => {
    const dir = tempDir();
    dirs.push(dir);
    const file = join(dir, 'window-state.json');
    writeWindowState(file, state(10.4, 20.6, 1000, 700, true));
    expect(readWindowState(file)).toEqual(state(10, 21, 1000, 700, true));
    expect(existsSync(`${file}.tmp`)).toBe(false);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(state(10, 21, 1000, 700, true));
  });

  it('ignores a missing, damaged or foreign file', () => {
    const dir = tempDir();
    dirs.push(dir);
    const file = join(dir, 'window-state.json');
    expect(readWindowState(file)).toBeNull();
    writeFileSync(file, '{"bounds": {"x": 1');
    expect(readWindowState(file)).toBeNull();
    expect(parseWindowState('{"bounds":{"x":0,"y":0,"width":-5,"height":10},"maximized":false}')).toBeNull();
    expect(
      parseWindowState('{"bounds":{"x":0,"y":0,"width":"wide","height":10},"maximized":false}'),
    ).toBeNull();
    expect(parseWindowState('{"bounds":{"x":0,"y":0,"width":800,"height":600}}')).toBeNull();
    expect(parseWindowState('null')).toBeNull();
  });
});

describe('placing the window', () => {
  it('opens at the default size, centred, the first time', () => {
    expect(placeWindow(null, [PRIMARY])).toEqual({ bounds: { ...DEFAULT_WINDOW_SIZE }, maximized: false });
    expect(placeWindow(null, [{ x: 0, y: 0, width: 1024, height: 700 }])).toEqual({
      bounds: { width: 1024, height: 700 },
      maximized: false,
    });
  });

  it('keeps a saved window that is on a display', () => {
    expect(placeWindow(state(100, 50, 1000, 700), [PRIMARY, RIGHT])).toEqual({
      bounds: { x: 100, y: 50, width: 1000, height: 700 },
      maximized: false,
    });
    expect(placeWindow(state(2000, 100, 900, 600, true), [PRIMARY, RIGHT])).toEqual({
      bounds: { x: 2000, y: 100, width: 900, height: 600 },
      maximized: true,
    });
  });

  it('moves a window partly off its display fully onto it, shrinking it if needed', () => {
    expect(placeWindow(state(1700, 900, 1000, 700), [PRIMARY])).toEqual({
      bounds: { x: 920, y: 350, width: 1000, height: 700 },
      maximized: false,
    });
    expect(placeWindow(state(-200, -50, 2500, 1400), [PRIMARY])).toEqual({
      bounds: { x: 0, y: 0, width: 1920, height: 1050 },
      maximized: false,
    });
  });

  it('centres a window whose display is gone, keeping its size', () => {
    expect(placeWindow(state(2000, 100, 900, 600), [PRIMARY])).toEqual({
      bounds: { width: 900, height: 600 },
      maximized: false,
    });
    // A sliver of 10 pixels on screen does not count as visible.
    expect(placeWindow(state(1910, 100, 900, 600), [PRIMARY])).toEqual({
      bounds: { width: 900, height: 600 },
      maximized: false,
    });
  });

  it('never goes below the minimum size', () => {
    expect(placeWindow(state(10, 10, 100, 100), [PRIMARY])).toEqual({
      bounds: { x: 10, y: 10, ...MIN_WINDOW_SIZE },
      maximized: false,
    });
  });

  it('picks the display the window overlaps most', () => {
    const mostlyLeft = placeWindow(state(1000, 100, 1000, 600), [PRIMARY, RIGHT]);
    expect(mostlyLeft.bounds).toEqual({ x: 920, y: 100, width: 1000, height: 600 });
    const mostlyRight = placeWindow(state(1800, 100, 1000, 600), [PRIMARY, RIGHT]);
    expect(mostlyRight.bounds).toEqual({ x: 1920, y: 100, width: 1000, height: 600 });
  });
});
