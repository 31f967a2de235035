// The `pollingUrl` transport (docs/live-channel.md): the /ws frames over HTTP for cards whose
// WebSocket is blocked. GET long-polls for server frames; POST carries one client frame. This
// file only speaks HTTP; `live-socket.ts` decides when to use it and applies the frames.

import { httpRefusal } from './action-retry';
import { isObject, type ErrorPayload, type Frame } from './protocol';

/** Seconds the server may hold a GET open waiting for news (the server allows 0 to 25). */
export const LONG_POLL_WAIT_SECONDS = 20;
/** A GET that outlives its wait by this much is abandoned as a dead connection. */
const GRACE_MS = 10_000;

export interface PollCursors {
  revision?: number;
  lastStreamSeq?: number;
  lastSequence?: number;
}

export type PollResult =
  | { kind: 'ok'; frames: Frame[]; cursors: PollCursors }
  /** HTTP 401: the token is refused (expired, tampered or foreign). */
  | { kind: 'refused' }
  /** No answer, or an HTTP error; `refusal` is that error in the words `/ws` would have used
   * (`action-retry.ts`, `httpRefusal`): absent when no answer came. */
  | { kind: 'failed'; detail: string; refusal?: ErrorPayload };

export interface PollQuery {
  token: string;
  fromSeq: number;
  sinceSequence: number;
  /** Absent on the first poll: the server answers with an `ack`. */
  revision?: number;
  wait: number;
}

export class LongPoll {
  /** The requests in flight, GETs and POSTs apart: polling may end while a POST is out. */
  private readonly gets = new Set<AbortController>();
  private readonly posts = new Set<AbortController>();

  constructor(private readonly url: string) {}

  get(query: PollQuery): Promise<PollResult> {
    const params = new URLSearchParams({
      token: query.token,
      fromSeq: String(query.fromSeq),
      sinceSequence: String(query.sinceSequence),
      wait: String(query.wait),
    });
    if (query.revision !== undefined) params.set('revision', String(query.revision));
    return this.request(`${this.url}?${params}`, { method: 'GET' }, query.wait * 1000 + GRACE_MS, this.gets);
  }

  /** One client frame (`action`, `host_context_observed`); answers what the socket would have. */
  post(token: string, frame: Frame): Promise<PollResult> {
    const params = new URLSearchParams({ token });
    return this.request(
      `${this.url}?${params}`,
      { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(frame) },
      GRACE_MS,
      this.posts,
    );
  }

  /** Cancels the GET in flight; a POST out still brings its answer (it may store an action). */
  abortPolls(): void {
    abortAll(this.gets);
  }

  /** Whether a request is in flight (a retired transport with none needs no cancelling). */
  get busy(): boolean {
    return this.gets.size + this.posts.size > 0;
  }

  /** Cancels every request in flight. */
  abort(): void {
    abortAll(this.gets);
    abortAll(this.posts);
  }

  private async request(url: string, init: RequestInit, timeoutMs: number, controllers: Set<AbortController>): Promise<PollResult> {
    const controller = new AbortController();
    controllers.add(controller);
    const timer = window.setTimeout(() => controller.abort(), timeoutMs);
    try {
      const response = await fetch(url, { ...init, cache: 'no-store', credentials: 'omit', signal: controller.signal });
      if (response.status === 401) return { kind: 'refused' };
      if (!response.ok) {
        const body: unknown = await response.json().catch(() => null);
        const refusal = httpRefusal(response.status, body, response.headers.get('retry-after'), Date.now());
        return { kind: 'failed', detail: `HTTP ${response.status}`, ...(refusal ? { refusal } : {}) };
      }
      const body: unknown = await response.json();
      if (!isObject(body)) return { kind: 'failed', detail: 'the answer is not a JSON object' };
      const frames = Array.isArray(body.frames) ? body.frames.filter((f): f is Frame => isObject(f) && typeof f.type === 'string') : [];
      const cursors = isObject(body.cursors) ? (body.cursors as PollCursors) : {};
      return { kind: 'ok', frames, cursors };
    } catch (error) {
      return { kind: 'failed', detail: error instanceof Error ? error.message : String(error) };
    } finally {
      window.clearTimeout(timer);
      controllers.delete(controller);
    }
  }
}

function abortAll(controllers: Set<AbortController>): void {
  for (const controller of controllers) controller.abort();
  controllers.clear();
}
