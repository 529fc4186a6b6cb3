import type {
  PermissionOptionKind,
  RequestPermissionRequest,
  RequestPermissionResponse,
} from '@agentclientprotocol/sdk/unstable';
import type { ApprovalAnswer, ApprovalRequest, ApprovalSubject } from '../../types.js';
import { editDiff } from '../../approval-detail.js';

type ToolCall = RequestPermissionRequest['toolCall'];

/** Gemini CLI names its calls `<tool>__<tool>_<n>`; other agents give no tool name apart from the title. */
function toolName(call: ToolCall): string {
  const prefix = call.toolCallId.split('__')[0];
  return prefix !== undefined && prefix !== call.toolCallId ? prefix : (call.title ?? call.kind ?? 'tool');
}

/** The command of an `execute` call, as its input says the agent would run it. */
function inputCommand(call: ToolCall): string | undefined {
  const input = call.rawInput as { command?: unknown } | undefined;
  if (typeof input?.command === 'string') return input.command;
  if (Array.isArray(input?.command)) {
    const parts = input.command.map(String);
    // `bash -lc "<script>"`: the script is what the person reads.
    return parts.length === 3 && /(?:^|\/)(?:ba|z)?sh$/u.test(parts[0] ?? '') ? parts[2] : parts.join(' ');
  }
  return undefined;
}

/** The command of an `execute` call, as the agent would run it, or its title where it says no more. */
function commandOf(call: ToolCall): string | undefined {
  return inputCommand(call) ?? call.title ?? undefined;
}

/**
 * Gemini CLI's shell tool, named in its calls' ids (`run_shell_command__…`): Gemini CLI sends the
 * command only as the call's title, which it makes of the command alone.
 */
const SHELL_TOOLS_TITLED_BY_COMMAND = new Set(['run_shell_command']);

/**
 * What approval rules match of a call: the command its input carries, the paths of its
 * locations and diffs, the URL its input names. Not its title, an agent's words for the call,
 * but where a known agent's shell tool puts the command nowhere else; and its kind, never its
 * words, decides which of these a rule looks at.
 */
function subjectOf(call: ToolCall): ApprovalSubject {
  const [tool] = call.toolCallId.includes('__') ? call.toolCallId.split('__') : [];
  const titled = tool !== undefined && SHELL_TOOLS_TITLED_BY_COMMAND.has(tool) ? call.title : undefined;
  const command = inputCommand(call) ?? titled ?? undefined;
  const url = (call.rawInput as { url?: unknown } | undefined)?.url;
  const paths = [
    ...(call.locations ?? []).map((location) => location.path),
    ...(call.content ?? []).flatMap((item) => (item.type === 'diff' ? [item.path] : [])),
  ];
  return {
    ...(command === undefined ? {} : { command }),
    ...(paths.length === 0 ? {} : { paths }),
    ...(typeof url === 'string' ? { url } : {}),
  };
}

/** What the transcript shows of a call: the command, or each edit's diff, and the agent's words on it. */
function detailOf(call: ToolCall): string {
  const parts: string[] = [];
  if (call.kind === 'execute') parts.push(`$ ${commandOf(call) ?? ''}`);
  for (const item of call.content ?? []) {
    if (item.type === 'diff') parts.push(editDiff(item.path, item.oldText ?? null, item.newText));
    else if (item.type === 'content' && item.content.type === 'text') parts.push(item.content.text);
  }
  return parts.join('\n\n');
}

/** The agent's request as a pending approval: its own options, as it named them. */
export function permissionRequest(request: RequestPermissionRequest): ApprovalRequest {
  const call = request.toolCall;
  const input =
    call.rawInput ??
    (call.kind === 'execute'
      ? { command: commandOf(call) }
      : { title: call.title, content: call.content, locations: call.locations });
  return {
    title: call.title ?? toolName(call),
    tool: { kind: call.kind ?? 'other', name: toolName(call), input },
    options: request.options.map((o) => ({
      id: o.optionId,
      kind: o.kind as PermissionOptionKind,
      label: o.name,
    })),
    detail: detailOf(call),
    subject: subjectOf(call),
  };
}

/**
 * The answer the agent gets: the option chosen. A rejection without an option of its own, and
 * a request its run ended first, are `cancelled`, which the protocol keeps for that.
 */
export function permissionAnswer(answer: ApprovalAnswer): RequestPermissionResponse {
  return answer.optionId === undefined
    ? { outcome: { outcome: 'cancelled' } }
    : { outcome: { outcome: 'selected', optionId: answer.optionId } };
}

/** A rejection an agent ended its turn at, to be passed on to it. */
export interface Rejection {
  title: string;
  message?: string;
}

/**
 * The prompt that passes a rejection on: the protocol's answer carries only the option, so an
 * agent that ends its turn at a rejection (Codex's "No, and tell Codex what to do differently")
 * would otherwise never hear that it was rejected, nor what the person said.
 */
export function rejectionPrompt(rejection: Rejection): string {
  const said = rejection.message === undefined ? '' : `\n\n${rejection.message}`;
  return `Your request was rejected, so it did not happen: ${rejection.title}${said}`;
}
