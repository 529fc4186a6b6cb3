import { APPROVAL_KINDS, approvalKindWords, type ApprovalOption } from '../../src-shared/approvals.js';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../../src-shared/json-depth.js';
import { blockText, lineText } from '../../src-shared/plain-text.js';
import type { ApprovalRequest } from '../agents/types.js';

/**
 * What an agent may put in front of a person, whatever it sends: a few requests waiting at a
 * time per run, texts of bounded length without control or bidirectional characters, options
 * of the kinds the protocol names. Every agent's requests (Claude Code's, Codex's, the ACP
 * agents') pass here before they are stored or shown.
 */
export const APPROVAL_LIMITS = {
  /** Requests of one run waiting at once; the agent's next ones are rejected as they come. */
  pendingPerRun: 8,
  titleChars: 200,
  detailChars: 100_000,
  labelChars: 100,
  options: 8,
  optionIdChars: 200,
  toolNameChars: 100,
  toolKindChars: 40,
  /** A tool's input, as JSON, kept whole up to this; a larger one is replaced by a note. */
  inputBytes: 100_000,
} as const;

function boundedOptions(options: readonly ApprovalOption[]): ApprovalOption[] {
  const kinds: readonly string[] = APPROVAL_KINDS;
  const ids = new Set<string>();
  const kept: ApprovalOption[] = [];
  for (const option of options) {
    // An option of a kind the protocol does not name cannot be shown for what it does.
    if (typeof option.kind !== 'string' || !kinds.includes(option.kind)) continue;
    if (typeof option.id !== 'string' || option.id === '' || option.id.length > APPROVAL_LIMITS.optionIdChars)
      continue;
    if (ids.has(option.id)) continue;
    ids.add(option.id);
    const label = typeof option.label === 'string' ? lineText(option.label, APPROVAL_LIMITS.labelChars) : '';
    kept.push({
      id: option.id,
      kind: option.kind,
      label: label === '' ? approvalKindWords(option.kind) : label,
    });
    if (kept.length === APPROVAL_LIMITS.options) break;
  }
  return kept;
}

/** The tool's input as it may be kept: whole, or a note when it is too deep or too large. */
function boundedInput(input: unknown): unknown {
  if (nestedDeeperThan(input, MAX_JSON_DEPTH - 2)) {
    return { omitted: `The input is nested more than ${MAX_JSON_DEPTH - 2} levels deep: not kept.` };
  }
  const bytes = Buffer.byteLength(JSON.stringify(input) ?? '', 'utf8');
  return bytes > APPROVAL_LIMITS.inputBytes
    ? { omitted: `The input is ${bytes} bytes as JSON: not kept (at most ${APPROVAL_LIMITS.inputBytes}).` }
    : input;
}

/** The request as it may be stored and shown. */
export function boundedRequest(request: ApprovalRequest): ApprovalRequest {
  const name = lineText(String(request.tool.name), APPROVAL_LIMITS.toolNameChars) || 'tool';
  return {
    title: lineText(String(request.title), APPROVAL_LIMITS.titleChars) || name,
    tool: {
      kind: lineText(String(request.tool.kind), APPROVAL_LIMITS.toolKindChars) || 'other',
      name,
      input: boundedInput(request.tool.input),
    },
    options: boundedOptions(request.options),
    detail: blockText(String(request.detail), APPROVAL_LIMITS.detailChars),
  };
}
