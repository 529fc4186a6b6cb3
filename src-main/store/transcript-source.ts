import type { Repos } from './storage.js';
import type { PayloadPiece } from './transcript-format.js';

/**
 * Sessions' transcripts as services read them, on either database: the desktop's files
 * (`sqljs-storage.ts`) or a team server's `transcript_chunks` (`store-postgres/transcripts.ts`).
 * Offsets are a transcript's bytes (`transcript-format.ts`), the same on both; a read stops at a
 * length the session's row counted, which `settled` makes safe to read up to.
 */
export interface TranscriptSource {
  /**
   * Runs `read` at an instant when every byte a session's row counts can be read: its first
   * read of the row agrees with the transcript up to the length it gives. Later writes only
   * append past that length.
   */
  settled<T>(sessionId: string, read: (repos: Repos) => Promise<T>): Promise<T>;
  /** The payloads of the frames in [from, to), piece by piece: `from` a frame's start, `to` one's end. */
  readPayloads(sessionId: string, from: number, to: number): AsyncGenerator<PayloadPiece>;
  /** The payload of the one frame that starts at `offset`, below `to`. */
  readFrame(sessionId: string, offset: number, to: number): Promise<Buffer>;
  /** Bytes [from, until) of the payload of the frame at `offset`, and the payload's length. */
  readPayloadRange(
    sessionId: string,
    offset: number,
    to: number,
    from: number,
    until: number,
  ): Promise<{ bytes: Buffer; payloadBytes: number }>;
  /** The first `length` bytes of a transcript as kept, in pieces (for backups). */
  readRaw(sessionId: string, length: number): AsyncGenerator<Buffer>;
}
