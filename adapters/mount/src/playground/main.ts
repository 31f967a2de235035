// Entry of dist/playground.js, the page at GET /_svc/playground (docs/playground.md): sign in
// when the server is strict, list recent sessions, mount the chosen card, and show the actions
// the card sent and what `svc_consume` drained.

import type { Client } from '@modelcontextprotocol/client';
import { connectAgent, drain, recentSessions, type SessionRow } from './agent-client';
import { forgetBearer, signIn, storedBearer } from './auth';
import { mountCard, type MountedCard } from './card-frame';

function element<T extends HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (!found) throw new Error(`#${id} is missing from the page`);
  return found as T;
}

function appendJson(list: HTMLElement, label: string, value: unknown): void {
  const item = document.createElement('li');
  const title = document.createElement('strong');
  title.textContent = label;
  const body = document.createElement('pre');
  body.textContent = JSON.stringify(value, null, 2);
  item.append(title, body);
  list.append(item);
}

class Playground {
  private current: MountedCard | null = null;
  private sessionId: string | null = null;

  constructor(private readonly client: Client) {}

  async listSessions(): Promise<void> {
    const list = element('sessions');
    const sessions = await recentSessions(this.client);
    list.replaceChildren();
    if (sessions.length === 0) {
      const empty = document.createElement('li');
      empty.textContent = 'No render yet: call svc_render, then Refresh.';
      list.append(empty);
    }
    for (const session of sessions) list.append(this.sessionItem(session));
  }

  /** `#<sessionId>` (the link svc_render's text gives): opens that card. */
  openFromHash(): void {
    const wanted = decodeURIComponent(window.location.hash.slice(1));
    if (wanted === '') return;
    const button = Array.from(element('sessions').querySelectorAll<HTMLButtonElement>('button')).find(
      (candidate) => candidate.dataset.sessionId === wanted,
    );
    button?.click();
  }

  private sessionItem(session: SessionRow): HTMLLIElement {
    const item = document.createElement('li');
    const button = document.createElement('button');
    button.type = 'button';
    button.dataset.sessionId = session.sessionId;
    button.textContent = session.sessionId;
    const meta = document.createElement('small');
    meta.textContent = `${session.status} · ${new Date(session.createdAt).toLocaleString()}`;
    button.append(meta);
    const token = session.wsToken;
    if (!token) button.disabled = true;
    else button.addEventListener('click', () => void this.open(session.sessionId, token, button));
    item.append(button);
    return item;
  }

  private async open(sessionId: string, wsToken: string, button: HTMLButtonElement): Promise<void> {
    const status = element('card-status');
    for (const other of element('sessions').querySelectorAll('button')) other.removeAttribute('aria-current');
    button.setAttribute('aria-current', 'true');
    await this.current?.close();
    element('sent').replaceChildren();
    element('drained').replaceChildren();
    this.sessionId = sessionId;
    status.textContent = `Mounting ${sessionId}…`;
    try {
      this.current = await mountCard(element('card-slot'), this.client, sessionId, wsToken, {
        onLog: (params) => {
          if (params.logger === 'svc.action') appendJson(element('sent'), 'action', params.data);
        },
      });
      status.textContent = `Mounted ${sessionId}.`;
      element<HTMLButtonElement>('drain').disabled = false;
    } catch (error) {
      status.textContent = `Could not mount ${sessionId}: ${error instanceof Error ? error.message : String(error)}`;
    }
  }

  async drain(): Promise<void> {
    if (!this.sessionId) return;
    const list = element('drained');
    try {
      const events = await drain(this.client, this.sessionId);
      if (events.length === 0) appendJson(list, 'nothing pending', []);
      for (const event of events) appendJson(list, 'event', event);
    } catch (error) {
      appendJson(list, 'svc_consume failed', error instanceof Error ? error.message : String(error));
    }
  }
}

async function begin(bearer: string): Promise<void> {
  const client = await connectAgent(bearer);
  const playground = new Playground(client);
  element('sign-in').hidden = true;
  element('workspace').hidden = false;
  element('refresh').addEventListener('click', () => void playground.listSessions());
  element('drain').addEventListener('click', () => void playground.drain());
  await playground.listSessions();
  document.documentElement.dataset.ready = 'true';
  playground.openFromHash();
}

function showSignIn(message = ''): void {
  const form = element<HTMLFormElement>('sign-in');
  form.hidden = false;
  element('sign-in-error').textContent = message;
  document.documentElement.dataset.ready = 'sign-in';
}

async function start(): Promise<void> {
  const form = element<HTMLFormElement>('sign-in');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const typed = element<HTMLInputElement>('credential').value;
    void signIn(typed)
      .then(begin)
      .catch((error: unknown) => {
        forgetBearer();
        showSignIn(error instanceof Error ? error.message : String(error));
      });
  });
  const bearer = storedBearer();
  if (!bearer) return showSignIn();
  try {
    await begin(bearer);
  } catch (error) {
    // A stored key that was revoked, or a server restarted in strict mode: ask again.
    forgetBearer();
    showSignIn(error instanceof Error ? error.message : String(error));
  }
}

void start();
