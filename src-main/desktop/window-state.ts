import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { z } from 'zod';

/**
 * The window's size and position, kept in a small JSON file in userData between runs. A
 * saved position is used only while it is still on a display (monitors get unplugged).
 */
export const WINDOW_STATE_FILE = 'window-state.json';
export const DEFAULT_WINDOW_SIZE = { width: 1280, height: 800 } as const;
export const MIN_WINDOW_SIZE = { width: 720, height: 480 } as const;
/** How much of a saved window must still be on a display for its position to be kept. */
const MIN_VISIBLE = { width: 160, height: 80 } as const;

const RectangleSchema = z.object({
  x: z.number().int().min(-100_000).max(100_000),
  y: z.number().int().min(-100_000).max(100_000),
  width: z.number().int().positive().max(100_000),
  height: z.number().int().positive().max(100_000),
});
export type Rectangle = z.infer<typeof RectangleSchema>;

const WindowStateSchema = z.object({ bounds: RectangleSchema, maximized: z.boolean() });
export type WindowState = z.infer<typeof WindowStateSchema>;

/** Where to open the window: no x/y means "let the system centre it". */
export interface WindowPlacement {
  bounds: { width: number; height: number; x?: number; y?: number };
  maximized: boolean;
}

/** The saved state, or null when there is none or it is not a state this app wrote. */
export function parseWindowState(text: string): WindowState | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = WindowStateSchema.safeParse(raw);
  return parsed.success ? parsed.data : null;
}

export function readWindowState(file: string): WindowState | null {
  try {
    return parseWindowState(readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

/** Written to a temporary file and renamed, so a crash never leaves half a file. */
export function writeWindowState(file: string, state: WindowState): void {
  const rounded: WindowState = {
    bounds: {
      x: Math.round(state.bounds.x),
      y: Math.round(state.bounds.y),
      width: Math.round(state.bounds.width),
      height: Math.round(state.bounds.height),
    },
    maximized: state.maximized,
  };
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(rounded, null, 2)}\n`);
  renameSync(tmp, file);
}

function overlap(a: Rectangle, b: Rectangle): { width: number; height: number } {
  return {
    width: Math.max(0, Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x)),
    height: Math.max(0, Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y)),
  };
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(Math.max(value, min), max);
}

function fitSize(width: number, height: number, area: Rectangle | undefined) {
  const w = Math.max(width, MIN_WINDOW_SIZE.width);
  const h = Math.max(height, MIN_WINDOW_SIZE.height);
  return area
    ? { width: Math.min(w, area.width), height: Math.min(h, area.height) }
    : { width: w, height: h };
}

/**
 * The saved bounds fitted to the displays' work areas (the first is the primary): kept on
 * the display it overlaps most, shrunk to fit it and moved fully onto it. A window that is
 * (almost) off every display keeps its size, fitted to the primary display, and is centred.
 */
export function placeWindow(saved: WindowState | null, workAreas: readonly Rectangle[]): WindowPlacement {
  const primary = workAreas[0];
  if (saved === null) {
    return {
      bounds: fitSize(DEFAULT_WINDOW_SIZE.width, DEFAULT_WINDOW_SIZE.height, primary),
      maximized: false,
    };
  }
  let best: Rectangle | undefined;
  let bestArea = 0;
  for (const area of workAreas) {
    const o = overlap(saved.bounds, area);
    if (
      o.width >= Math.min(MIN_VISIBLE.width, saved.bounds.width) &&
      o.height >= Math.min(MIN_VISIBLE.height, saved.bounds.height)
    ) {
      if (o.width * o.height > bestArea) {
        best = area;
        bestArea = o.width * o.height;
      }
    }
  }
  if (best === undefined) {
    return { bounds: fitSize(saved.bounds.width, saved.bounds.height, primary), maximized: saved.maximized };
  }
  const size = fitSize(saved.bounds.width, saved.bounds.height, best);
  return {
    bounds: {
      ...size,
      x: clamp(saved.bounds.x, best.x, best.x + best.width - size.width),
      y: clamp(saved.bounds.y, best.y, best.y + best.height - size.height),
    },
    maximized: saved.maximized,
  };
}
