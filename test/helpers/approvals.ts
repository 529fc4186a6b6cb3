import { expect } from 'vitest';
import {
  ApprovalResponseSchema,
  ApprovalsResponseSchema,
  FullSessionResponseSchema,
  TranscriptApprovalDecidedSchema,
  type Approval,
  type TranscriptApprovalDecided,
  type SessionFull,
} from '../../src-shared/index.js';
import { asUser, type TestServer } from './server.js';
import { until } from './until.js';

/** The pending requests of a session, as its workspace's inbox lists them. */
export async function pendingApprovals(
  server: TestServer,
  cookie: string,
  organizationId: string,
  sessionId: string,
): Promise<Approval[]> {
  const response = await asUser(
    server,
    cookie,
    'GET',
    `/api/approvals?organizationId=${organizationId}&sessionId=${sessionId}`,
  );
  expect(response.status, await response.clone().text()).toBe(200);
  return ApprovalsResponseSchema.parse(await response.json()).approvals;
}

/** Waits until the session's agent asks, and returns its one pending request. */
export async function firstRequest(
  server: TestServer,
  cookie: string,
  organizationId: string,
  sessionId: string,
  ms = 90_000,
): Promise<Approval> {
  const pending = await until(
    () => pendingApprovals(server, cookie, organizationId, sessionId),
    (found) => found.length > 0,
    ms,
  );
  expect(pending, 'the agent never asked').toHaveLength(1);
  return pending[0] as Approval;
}

/** One request, pending or decided. */
export async function getApproval(server: TestServer, cookie: string, id: string): Promise<Approval> {
  const response = await asUser(server, cookie, 'GET', `/api/approvals/${id}`);
  expect(response.status, await response.clone().text()).toBe(200);
  return ApprovalResponseSchema.parse(await response.json()).approval;
}

/** Waits until the request is decided (by the time-out, a stop…). */
export async function decided(
  server: TestServer,
  cookie: string,
  id: string,
  ms = 30_000,
): Promise<Approval> {
  return until(
    () => getApproval(server, cookie, id),
    (approval) => approval.decidedAt !== undefined,
    ms,
  );
}

/** A signed-in member's decision; the answer's status is asserted. */
export async function decide(
  server: TestServer,
  cookie: string,
  id: string,
  body: unknown,
  status = 200,
): Promise<unknown> {
  const response = await asUser(server, cookie, 'POST', `/api/approvals/${id}`, body);
  expect(response.status, await response.clone().text()).toBe(status);
  return response.json();
}

/** The session's full form, read directly (no waiting). */
export async function sessionNow(server: TestServer, cookie: string, id: string): Promise<SessionFull> {
  const response = await asUser(server, cookie, 'GET', `/api/sessions/${id}`);
  return FullSessionResponseSchema.parse(await response.json()).session;
}

/** The texts of the session's notices about requests and their decisions, in order. */
export function approvalNotices(session: SessionFull): string[] {
  return session.messages.flatMap((m) =>
    m.type === 'assistant' && ('approval' in m || 'approvalDecided' in m)
      ? m.message.content.flatMap((b) => (b.type === 'text' ? [b.text] : []))
      : [],
  );
}

/** What became of the session's requests, in order, as its transcript records it. */
export function transcriptDecisions(session: SessionFull): TranscriptApprovalDecided[] {
  return session.messages.flatMap((m) =>
    m.type === 'assistant' && 'approvalDecided' in m
      ? [TranscriptApprovalDecidedSchema.parse(m.approvalDecided)]
      : [],
  );
}
