/**
 * Text that an agent (or any program) wrote, made fit to show a person: what a terminal's escape
 * sequences, control characters and bidirectional overrides would hide or reorder is removed,
 * and the length bounded.
 */

/** A terminal's escape sequences (CSI, OSC, and the two-character ones), removed whole. */
// eslint-disable-next-line no-control-regex
const ESCAPE_SEQUENCE = /\u001b(?:\[[0-?]*[ -/]*[@-~]?|\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|[@-_])?/gu;
/** Control characters (line ends among them) and the bidirectional marks and overrides. */
const CONTROL = /[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;
/** The same, but for line ends and tabs, which a command or diff keeps. */
const CONTROL_BUT_LINES = /[^\P{Cc}\n\t]|[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;
/** A UTF-16 half without its other half. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/gu;

const cutAt = (text: string, max: number) => text.slice(0, max).replace(/[\ud800-\udbff]$/u, '');

/** One line of text: what control characters hid removed, whitespace collapsed, cut with "…". */
export function lineText(text: string, max: number): string {
  const line = text
    .replace(ESCAPE_SEQUENCE, '')
    .replace(LONE_SURROGATE, '\ufffd')
    .replace(CONTROL, ' ')
    .replace(/\s+/gu, ' ')
    .trim();
  return line.length > max ? `${cutAt(line, max - 1).trimEnd()}…` : line;
}

/** Lines of text (a command, a diff): control characters removed, lines kept, cut saying how much. */
export function blockText(text: string, max: number): string {
  const block = text
    .replace(ESCAPE_SEQUENCE, '')
    .replace(LONE_SURROGATE, '\ufffd')
    .replace(/\r\n?/gu, '\n')
    .replace(CONTROL_BUT_LINES, '');
  if (block.length <= max) return block;
  return `${cutAt(block, max)}\n… ${block.length - max} more characters not shown: Session Desk shows ${max}.`;
}
