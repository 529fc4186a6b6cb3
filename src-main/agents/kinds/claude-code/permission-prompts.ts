import type { Writable } from 'node:stream';
import type { ApprovalOption } from '../../../../src-shared/approvals.js';
import { editDiff } from '../../approval-detail.js';
import type { ApprovalAnswer, ApprovalRequest, ApprovalSubject } from '../../types.js';

/**
 * Claude Code's own permission prompts, answered over its stream-json control protocol
 * (`--input-format=stream-json --permission-prompt-tool=stdio`, as its Agent SDK drives it):
 * the CLI writes `{"type":"control_request","request_id":…,"request":{"subtype":"can_use_tool",
 * "tool_name":…,"input":…,"permission_suggestions":[…],"tool_use_id":…}}` on stdout and waits
 * for `{"type":"control_response","response":{"subtype":"success","request_id":…,
 * "response":{"behavior":"allow","updatedInput":…}|{"behavior":"deny","message":…}}}` on stdin.
 */

interface CanUseTool {
  subtype: 'can_use_tool';
  tool_name: string;
  input: Record<string, unknown>;
  permission_suggestions?: { destination?: string }[];
  tool_use_id?: string;
  title?: string;
  description?: string;
}

/** Claude Code's tools as the Agent Client Protocol's kinds (the table in docs/guides/approvals.md). */
const TOOL_KINDS: Record<string, string> = {
  Bash: 'execute',
  Write: 'edit',
  Edit: 'edit',
  MultiEdit: 'edit',
  NotebookEdit: 'edit',
  Read: 'read',
  LS: 'read',
  Glob: 'search',
  Grep: 'search',
  WebFetch: 'fetch',
  WebSearch: 'fetch',
};

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** What approval rules match of a call: its command, the path it touches, or its URL. */
function subjectOf(tool: string, input: Record<string, unknown>): ApprovalSubject {
  const given = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  switch (TOOL_KINDS[tool]) {
    case 'execute': {
      const command = given(input.command);
      return command === undefined ? {} : { command };
    }
    case 'edit':
    case 'read': {
      const path = given(input.file_path) ?? given(input.notebook_path) ?? given(input.path);
      return path === undefined ? {} : { paths: [path] };
    }
    case 'search':
      // Without a path, Glob and Grep search the folder the CLI runs in.
      return { paths: [given(input.path) ?? '.'] };
    case 'fetch': {
      const url = given(input.url);
      return url === undefined ? {} : { url };
    }
    default:
      return {};
  }
}

/** What a person reads before deciding: the command, or each edit's diff, in full. */
function detailOf(tool: string, input: Record<string, unknown>): string {
  const path = text(input.file_path);
  switch (tool) {
    case 'Bash':
      return [`$ ${text(input.command)}`, text(input.description)].filter((p) => p !== '').join('\n\n');
    case 'Write':
      return editDiff(path, null, text(input.content));
    case 'Edit':
      return editDiff(path, text(input.old_string), text(input.new_string));
    case 'MultiEdit':
      return (Array.isArray(input.edits) ? (input.edits as Record<string, unknown>[]) : [])
        .map((edit) => editDiff(path, text(edit.old_string), text(edit.new_string)))
        .join('\n\n');
    default:
      return JSON.stringify(input, null, 2);
  }
}

function titleOf(request: CanUseTool): string {
  if (request.title) return request.title;
  const input = request.input;
  if (request.tool_name === 'Bash') return text(input.command);
  const path = text(input.file_path);
  return path === '' ? request.tool_name : `${request.tool_name} ${path}`;
}

/** Claude Code has no options of its own: these, with "for this session" where it suggests rules. */
function optionsOf(request: CanUseTool): ApprovalOption[] {
  const options: ApprovalOption[] = [{ id: 'allow', kind: 'allow_once', label: 'Allow once' }];
  if ((request.permission_suggestions ?? []).length > 0)
    options.push({ id: 'allow_session', kind: 'allow_always', label: 'Allow for this session' });
  options.push({ id: 'reject', kind: 'reject_once', label: 'Reject' });
  return options;
}

export function toApprovalRequest(request: CanUseTool): ApprovalRequest {
  return {
    title: titleOf(request),
    tool: { kind: TOOL_KINDS[request.tool_name] ?? 'other', name: request.tool_name, input: request.input },
    options: optionsOf(request),
    detail: detailOf(request.tool_name, request.input),
    subject: subjectOf(request.tool_name, request.input),
  };
}

/** The CLI's answer: allowed as asked (for this session: the rules it suggested, kept in memory), or denied. */
export function toPermissionResult(request: CanUseTool, answer: ApprovalAnswer): Record<string, unknown> {
  const toolUseID = request.tool_use_id;
  if (answer.decision === 'allow_once' || answer.decision === 'allow_always') {
    const always = answer.decision === 'allow_always' && answer.optionId === 'allow_session';
    return {
      behavior: 'allow',
      updatedInput: request.input,
      ...(always
        ? {
            updatedPermissions: (request.permission_suggestions ?? []).map((s) => ({
              ...s,
              destination: 'session',
            })),
          }
        : {}),
      toolUseID,
    };
  }
  const why: Record<string, string> = {
    cancelled: 'The run was stopped before anyone decided.',
    expired: 'No one decided in time.',
  };
  return {
    behavior: 'deny',
    message: answer.message ?? why[answer.decision] ?? 'The person rejected this tool call.',
    ...(answer.decision === 'cancelled' ? { interrupt: true } : {}),
    toolUseID,
  };
}

/**
 * Speaks the control protocol on one run's stdin: the prompt as the first user message, each
 * permission request answered once decided (after what came before it is recorded), stdin
 * ended once the CLI has given its result.
 */
export function claudeCodePermissionPrompts(options: {
  stdin: Writable;
  ask: (request: ApprovalRequest) => Promise<ApprovalAnswer>;
  /** Resolves once what the CLI printed before the request is in the transcript. */
  recorded: () => Promise<void>;
  /** Something went wrong answering: said in the transcript. */
  problem: (text: string) => void;
}) {
  const { stdin } = options;
  const send = (message: unknown) => {
    if (!stdin.writableEnded) stdin.write(`${JSON.stringify(message)}\n`);
  };
  const respond = (requestId: string, response: Record<string, unknown>) =>
    send({ type: 'control_response', response: { subtype: 'success', request_id: requestId, response } });

  async function canUseTool(requestId: string, request: CanUseTool): Promise<void> {
    await options.recorded();
    const answer = await options.ask(toApprovalRequest(request));
    respond(requestId, toPermissionResult(request, answer));
  }

  return {
    prompt(text: string): void {
      send({
        type: 'user',
        message: { role: 'user', content: text },
        parent_tool_use_id: null,
        session_id: '',
      });
    },
    /** True when the line was the control protocol's (not the transcript's). */
    line(text: string): boolean {
      if (!text.includes('"control_')) return false;
      let message: { type?: string; request_id?: string; request?: { subtype?: string } };
      try {
        message = JSON.parse(text) as typeof message;
      } catch {
        return false;
      }
      if (message.type !== 'control_request') return message.type?.startsWith('control_') === true;
      const requestId = String(message.request_id);
      if (message.request?.subtype === 'can_use_tool') {
        canUseTool(requestId, message.request as CanUseTool).catch((err: unknown) => {
          options.problem(`Could not answer Claude Code's permission request: ${String(err)}`);
          respond(requestId, { behavior: 'deny', message: 'Session Desk could not ask.', interrupt: true });
        });
      } else {
        send({
          type: 'control_response',
          response: {
            subtype: 'error',
            request_id: requestId,
            error: `Session Desk does not handle ${String(message.request?.subtype)}`,
          },
        });
      }
      return true;
    },
    end(): void {
      if (!stdin.writableEnded) stdin.end();
    },
  };
}
