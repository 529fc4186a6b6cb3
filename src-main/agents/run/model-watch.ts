import { modelEndpointOf, type ModelEndpoint } from '../kinds/needs/model-endpoint.js';
import type { AgentFamily } from '../kinds/needs/person-config.js';
import { reach, type Reach } from '../sandbox/reach.js';

/**
 * A run whose model API cannot be reached ends within seconds, saying so, rather than after the
 * agent's own retries (OpenCode tries for about 70 s before it says "Cannot connect to API",
 * Claude Code for minutes, each silent meanwhile). While the agent has not answered, the API's
 * host and port are tried from here as the run would reach them (allow-list, proxy): a run that
 * has had no answer by `giveUpMs` and whose API could not be reached at any try is ended. An
 * API that answers a try ends the watch: the model is slow, not gone.
 */

export interface WatchTimes {
  /** The first try, counted from the program's start. */
  firstMs: number;
  /** The tries after it. */
  everyMs: number;
  /** A run with no answer by then, and no try that reached the API, is ended. */
  giveUpMs: number;
}

/**
 * A session's run: tries at 8, 13 and 18 s (each at most 3 s), so an unreachable API ends the
 * run 18 to 21 s after its program started; an agent starts and sends its first request within
 * a few seconds, and a try that reaches the API ends the watch.
 */
export const RUN_WATCH: WatchTimes = { firstMs: 8_000, everyMs: 5_000, giveUpMs: 18_000 };

/** Why the watch ended the run: the API it tried, why it could not reach it, and when. */
export interface GaveUp {
  endpoint: ModelEndpoint;
  reached: Extract<Reach, { reachable: false }>;
  afterMs: number;
}

export class ModelWatch {
  private startedAt: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private over = false;
  /** Set once the watch gave up on the API. */
  gaveUp: GaveUp | undefined;

  constructor(
    private readonly options: {
      endpoint: ModelEndpoint;
      /** Whether the run reaches the API now. */
      probe: () => Promise<Reach>;
      times: WatchTimes;
      giveUp: (why: GaveUp) => void;
    },
  ) {}

  /** The agent's program started: the clock runs from now. */
  started(): void {
    if (this.startedAt !== undefined || this.over) return;
    this.startedAt = Date.now();
    this.after(this.options.times.firstMs);
  }

  /** The model answered (text, thinking, a tool call): the API is reached, nothing to watch. */
  answered(): void {
    this.stop();
  }

  stop(): void {
    this.over = true;
    clearTimeout(this.timer);
  }

  private after(ms: number): void {
    this.timer = setTimeout(() => void this.look(), Math.max(0, ms));
    this.timer.unref();
  }

  private async look(): Promise<void> {
    if (this.over) return;
    const reached = await this.options.probe();
    if (this.over) return;
    if (reached.reachable) return this.stop();
    const elapsed = Date.now() - (this.startedAt ?? Date.now());
    const { everyMs, giveUpMs } = this.options.times;
    // An allow-list that leaves the host out will not change while the run waits.
    if (reached.notAllowed || elapsed >= giveUpMs) {
      this.stop();
      this.gaveUp = { endpoint: this.options.endpoint, reached, afterMs: elapsed };
      this.options.giveUp(this.gaveUp);
      return;
    }
    this.after(Math.min(everyMs, giveUpMs - elapsed));
  }
}

/**
 * The watch of a run of `family`'s agent, trying its API as the run reaches it; none where
 * Session Desk cannot tell the API (an agent it does not know, Bedrock, Vertex AI).
 */
export async function watchModel(options: {
  family: AgentFamily | undefined;
  env: NodeJS.ProcessEnv;
  allowedHosts: readonly string[] | undefined;
  times: WatchTimes;
  giveUp: (why: GaveUp) => void;
}): Promise<ModelWatch | undefined> {
  if (options.family === undefined) return undefined;
  const endpoint = await modelEndpointOf(options.family, options.env);
  if (!endpoint) return undefined;
  return new ModelWatch({
    endpoint,
    probe: () => reach(endpoint.url, { allowedHosts: options.allowedHosts, env: options.env }),
    times: options.times,
    giveUp: options.giveUp,
  });
}
