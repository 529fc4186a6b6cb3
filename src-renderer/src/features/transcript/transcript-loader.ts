import type { Message, MessagesPageResponse } from '../../../../src-shared/sessions';

/** Messages asked for per request; the server also stops a page at about 4 MiB. */
export const TRANSCRIPT_PAGE = 100;

/** Reads `limit` messages after the first `after`, as `GET /api/sessions/{id}/messages` does. */
export type PageReader = (after: number, limit: number) => Promise<MessagesPageResponse>;

/** What has been read of a transcript: one unbroken run of messages, ending at the latest read. */
export interface TranscriptView {
  /** Position in the conversation of `messages[0]`, or null before the first read. */
  start: number | null;
  messages: Message[];
  /** Messages in the session, as far as anyone has said. */
  total: number;
  readingEarlier: boolean;
  readingLater: boolean;
  error: Error | null;
}

/**
 * Reads a long transcript in pages: first its last page, so the latest work shows at once;
 * earlier pages when asked (the reader scrolls up); and, as the session grows, the messages
 * after the last one read. Reads in one direction never overlap, and what arrives is only
 * kept if it joins the run already read, so the messages stay in conversation order with no
 * gap and no repeat.
 */
export class TranscriptLoader {
  private view: TranscriptView = {
    start: null,
    messages: [],
    total: 0,
    readingEarlier: false,
    readingLater: false,
    error: null,
  };
  private readonly listeners = new Set<() => void>();

  /**
   * `from`: where the first read starts (a search hit opens the transcript at its message);
   * without it, the last page.
   */
  constructor(
    private readonly read: PageReader,
    private readonly from?: number,
  ) {}

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  readonly getView = (): TranscriptView => this.view;

  /** The session holds `total` messages now: reads the last page, or what came after it. */
  known(total: number): void {
    if (total > this.view.total) this.update({ total });
    this.readLater();
  }

  /** Reads the page before the earliest message read, if there is one. */
  readonly readEarlier = (): void => {
    const { start, readingEarlier, error } = this.view;
    if (start === null || start === 0 || readingEarlier || error) return;
    const from = Math.max(0, start - TRANSCRIPT_PAGE);
    this.update({ readingEarlier: true });
    this.readRun(from, start).then(
      ({ messages }) => {
        // Only the loader moves `start`, and only here, so it is still where this read began.
        this.update({ start: from, messages: [...messages, ...this.view.messages], readingEarlier: false });
        this.readLater();
      },
      (error: unknown) => this.update({ readingEarlier: false, error: asError(error) }),
    );
  };

  /** After a failed read: tries again. */
  readonly retry = (): void => {
    this.update({ error: null });
    this.readLater();
  };

  private readLater(): void {
    const { start, messages, total, readingLater, error } = this.view;
    if (readingLater || error) return;
    const end = start === null ? null : start + messages.length;
    if (end !== null && end >= total) return;
    const from = end ?? Math.max(0, Math.min(this.from ?? Infinity, total - TRANSCRIPT_PAGE));
    this.update({ readingLater: true });
    this.readRun(from).then(
      (run) => {
        const current = this.view;
        const joined =
          current.start === null
            ? { start: from, messages: run.messages }
            : { start: current.start, messages: [...current.messages, ...run.messages] };
        // A read that found nothing new takes the server's count, so it is not asked again.
        const total = run.messages.length === 0 ? run.total : Math.max(current.total, run.total);
        this.update({ ...joined, total, readingLater: false });
        this.readLater();
      },
      (error: unknown) => this.update({ readingLater: false, error: asError(error) }),
    );
  }

  /** Messages from `from` up to `until` (or to the end), following `nextAfter` across pages. */
  private async readRun(from: number, until?: number): Promise<{ messages: Message[]; total: number }> {
    const messages: Message[] = [];
    let after = from;
    let total: number;
    for (;;) {
      const limit = until === undefined ? TRANSCRIPT_PAGE : Math.min(TRANSCRIPT_PAGE, until - after);
      const page = await this.read(after, limit);
      messages.push(...page.messages);
      total = page.total;
      after += page.messages.length;
      if (page.nextAfter === undefined || page.messages.length === 0) break;
      if (until !== undefined && after >= until) break;
    }
    return { messages, total };
  }

  private update(change: Partial<TranscriptView>): void {
    this.view = { ...this.view, ...change };
    for (const listener of this.listeners) listener();
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
