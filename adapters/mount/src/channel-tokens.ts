// The live channel's tokens: which one a subscribe, a poll or a POST carries (the session token an
// `ack` brought, else the card's wsToken), and what is tried when the server refuses it: the
// wsToken behind a refused session token, then one fresh wsToken from the host per `ack`
// (`refreshWsToken`), then nothing (the channel fails with AUTH_FAILED, in the same words on
// either transport). A card with no token at all asks the host the same way before it polls (on a
// socket, the subscribe without one is refused and asks it). One swap at a time, whichever
// transport began it: a poll, a POST or a socket refused while one is under way waits for it.
// `live-socket.ts` owns the transports and reaches this file only through `ChannelTokensHost`.

import type { SubscribePayload } from './protocol';

/** Where the tokens come from: the card's wsToken, and the host's fresh ones (absent: none). */
export interface TokenSource {
  wsToken?: string;
  refreshWsToken?(): Promise<string | null>;
}

/** What the tokens need of the live channel: its state, read when needed, and what to do next. */
export interface ChannelTokensHost {
  /** The channel closed for good. */
  stopped(): boolean;
  /** The current transport got its `ack`. */
  subscribed(): boolean;
  /** The channel is down for now, and why (`onStatus('reconnecting', detail)`). */
  reconnecting(detail: string): void;
  /** The channel works again (`onStatus('live')`). */
  live(): void;
  /** Closes the channel for good. */
  fail(detail: string): void;
  /** Closes the socket whose subscribe was refused, without reporting it closed. */
  closeSocket(): void;
  /** Opens a socket that subscribes with the token now current. */
  connect(): void;
}

/** What is left to try once the current token is refused. */
type Fallback = 'wsToken' | 'refresh' | 'none';

/** Why the channel fails when the host gives no token in place of a refused one, or of none,
 * whichever transport was refused. The server refuses a request without a token with AUTH_FAILED
 * too, and a failure's status text starts with its code. */
const REFUSED = 'AUTH_FAILED: the live-channel token was refused';
const NO_TOKEN = 'AUTH_FAILED: the card has no token for the live channel';

export class ChannelTokens {
  private sessionToken: string | undefined;
  private wsToken: string | undefined;
  /** A refused wsToken is swapped once per successful subscribe, not in a loop. */
  private refreshed = false;
  /** The swap of a refused (or missing) token under way, whichever transport began it: a
   * request or a socket refused meanwhile waits for it. */
  private swap: Promise<boolean> | null = null;
  /** The swap a refused socket waits for: one reconnect however many sockets it refuses. */
  private socketWaits: Promise<boolean> | null = null;
  /** Swaps that brought a token, and the count at the last socket reconnected at once for one:
   * a refused socket reconnects so once per swap, whatever token its caller names. */
  private swaps = 0;
  private reconnectedForSwap = 0;

  constructor(
    private readonly source: TokenSource,
    private readonly host: ChannelTokensHost,
  ) {
    this.wsToken = source.wsToken || undefined; // an empty one is none: the host is asked for one
  }

  /** The token a poll or a POST carries. */
  current(): string | undefined {
    return this.sessionToken ?? this.wsToken;
  }

  /** Whether an `ack` brought a session token (still held): a subscribe then resumes a session. */
  hasSessionToken(): boolean {
    return this.sessionToken !== undefined;
  }

  /** The token fields of a subscribe: the session token, else the wsToken, else none. */
  credentials(): Pick<SubscribePayload, 'sessionToken' | 'wsToken'> {
    return this.sessionToken ? { sessionToken: this.sessionToken } : this.wsToken ? { wsToken: this.wsToken } : {};
  }

  /** A subscribe succeeded: the session token it brought is used from now on, and a refused
   * wsToken may be refreshed again. */
  acked(sessionToken: string | undefined): void {
    this.refreshed = false;
    if (sessionToken) this.sessionToken = sessionToken;
  }

  /**
   * The socket's subscribe, which carried `refused`, was refused (AUTH_FAILED): the socket is
   * closed and another opened with the token of a swap under way once it ends, with one swapped in
   * since at once (once per swap, so a stale `refused` cannot reconnect forever), else with the
   * wsToken at once, or with a fresh one once the host gives it (the channel fails if it gives
   * none). False when nothing is left to try: the caller fails the channel.
   */
  refusedOnSocket(refused: string | undefined): boolean {
    if (this.swap) {
      this.host.closeSocket();
      this.host.reconnecting('refreshing the live-channel token');
      this.reconnectAfter(this.swap);
      return true;
    }
    if (!sameToken(this.current(), refused) && this.reconnectedForSwap !== this.swaps) {
      // A swap ended while the subscribe was out: its token is untried, and needs no refresh.
      this.reconnectedForSwap = this.swaps;
      this.host.closeSocket();
      this.host.connect();
      return true;
    }
    const next = this.fallBack();
    if (next === 'none') return false;
    this.host.closeSocket();
    if (next === 'wsToken') {
      // The session token is refused (expired, or a rotated secret): fall back to the wsToken.
      this.host.connect();
      return true;
    }
    // Most likely an expired wsToken (a card reopened later): the host is asked for a fresh one
    // in the swap slot, so a poll or a POST refused meanwhile (`online`, then sockets closing
    // before their ack) waits for it rather than find the refresh spent.
    this.reconnectAfter(this.takeSlot(this.refresh(failureFor(refused))));
    return true;
  }

  /** A socket refused while a swap is under way (its own refresh, or polling's when a probe
   * brought the card back) reconnects with that swap's token once it ends, rather than spend
   * the refresh of the ack again. One reconnect however many sockets it refuses. */
  private reconnectAfter(swap: Promise<boolean>): void {
    if (this.socketWaits === swap) return; // a socket refused again meanwhile (`online`)
    this.socketWaits = swap;
    void swap.then((swapped) => {
      this.socketWaits = null;
      // Given no token, the swap failed the channel itself, saying why: nothing more to report.
      if (!swapped || this.host.stopped() || this.host.subscribed()) return;
      // The socket tries this swap's token now: a refusal naming an older one needs no other.
      this.reconnectedForSwap = this.swaps;
      this.host.connect();
    });
  }

  /**
   * A poll or a POST was refused (401) with `refused`. One swap at a time: a request refused
   * while one is under way joins it, and one refused with a token replaced since needs none.
   * True when there is another token to try, false once the channel closed instead.
   */
  swapRefused(refused: string): Promise<boolean> {
    return this.swapOnce(refused, failureFor(refused));
  }

  /**
   * A poll is due and the card has no token at all (its bootstrap carried none): the host is
   * asked for one, as for a refused wsToken, and the channel fails if it gives none. It shares the
   * swap of `swapRefused`: an ask while one is under way joins it, and one made once a token
   * arrived needs none. True once there is a token to try, false once the channel closed instead.
   */
  swapMissing(): Promise<boolean> {
    return this.swapOnce(undefined, NO_TOKEN);
  }

  /** One swap at a time, replacing `replaced` (still current); `failure` closes the channel when
   * nothing is left to try. */
  private swapOnce(replaced: string | undefined, failure: string): Promise<boolean> {
    if (this.host.stopped()) return Promise.resolve(false);
    if (this.swap) return this.swap;
    if (!sameToken(this.current(), replaced)) return Promise.resolve(true);
    return this.takeSlot(this.swapToken(failure));
  }

  /** `swap` is the one under way until it ends: whatever is refused meanwhile waits for it. */
  private takeSlot(swap: Promise<boolean>): Promise<boolean> {
    const slot = swap.finally(() => {
      if (this.swap === slot) this.swap = null;
    });
    this.swap = slot;
    return slot;
  }

  private async swapToken(failure: string): Promise<boolean> {
    const next = this.fallBack();
    if (next === 'wsToken') return this.swapped();
    if (next === 'refresh') return this.refresh(failure);
    this.host.fail(failure);
    return false;
  }

  /** Asks the host for a fresh wsToken; `failure` (with why, if the host threw) closes the
   * channel when it gives none. */
  private async refresh(failure: string): Promise<boolean> {
    this.host.reconnecting('refreshing the live-channel token');
    let token: string | null;
    try {
      token = await this.source.refreshWsToken!();
    } catch (error) {
      token = null;
      failure = refreshThrew(failure, error);
    }
    if (this.host.stopped()) return false;
    if (!token) {
      this.host.fail(failure);
      return false;
    }
    this.wsToken = token;
    // Refused by a POST, the poll session lives on: the channel works again right away.
    if (this.host.subscribed()) this.host.live();
    return this.swapped();
  }

  private swapped(): true {
    this.swaps += 1;
    return true;
  }

  /** Takes the next token to try: the session token falls back to the wsToken, which may be
   * refreshed once per `ack`. */
  private fallBack(): Fallback {
    if (this.sessionToken) {
      this.sessionToken = undefined;
      return 'wsToken';
    }
    if (this.source.refreshWsToken && !this.refreshed) {
      this.refreshed = true;
      return 'refresh';
    }
    return 'none';
  }
}

/** Why the channel fails, by what the refused request carried: a token, or none ('' is none). */
function failureFor(carried: string | undefined): string {
  return carried ? REFUSED : NO_TOKEN;
}

/** `failure`, saying why the host's refresh threw: the host's own words help more than ours. */
function refreshThrew(failure: string, error: unknown): string {
  return `${failure} and the host's refresh failed (${error instanceof Error ? error.message : String(error)})`;
}

/** Whether two tokens are the same; an empty one is none (as a poll treats it), so a swap of ''
 * asks for a token rather than taking '' for one replaced already. */
function sameToken(a: string | undefined, b: string | undefined): boolean {
  return (a || undefined) === (b || undefined);
}
