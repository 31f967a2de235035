#!/usr/bin/env node
// A rendered svc card in a real browser, end to end:
//   agent (official MCP SDK client) -> svc server -> MCP-Apps host page (ext-apps AppBridge)
//   -> sandboxed iframe running the mount runtime -> /ws -> back to the agent.
//
// A host whose CSP forbids the WebSocket gets the same card over the `pollingUrl` fallback.
//
// Usage: node tests/browser/card-flow.mjs <base-url>     (e.g. http://127.0.0.1:6781)
// Env:   SVC_CHROMIUM=/path/to/chromium (default /usr/bin/chromium; never downloads a browser)
// Exits non-zero with a message naming the failed step; screenshots go to ./artifacts/.

import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, StepFailure, WAIT_MS, check, same, waitFor } from './steps.mjs';
import { startHostServer as startSharedHostServer } from './host-server.mjs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ARTIFACTS = path.join(HERE, 'artifacts');

const CONTRACT = {
  propsSpec: {
    type: 'object',
    properties: { title: { type: 'string' }, status: { type: 'string' } },
    required: ['title', 'status'],
  },
  actionSpec: {
    approve: { schema: { type: 'object', properties: { note: { type: 'string' } }, required: ['note'] } },
  },
  streamSpec: { log: { mode: 'append', schema: { type: 'string' } } },
  contextSpec: { tab: { schema: { type: 'string' }, default: 'summary' } },
  // Declared by the manifest browser.rs starts the server with: a render can import a declared
  // package only if its contract lists it, and only then does its ack carry the bundle.
  clientCapabilities: { gadgets: { '@svc-test/badge': '1.0.0', '@svc-test/badge-tampered': '1.0.0' } },
};
// The port of the host page's server, which also serves the declared gadget bundles; browser.rs
// picks it so the server's manifest can name the bundles' URLs before this script starts.
const HOST_PORT = Number(process.env.SVC_BROWSER_HOST_PORT ?? 0);
const HOST_CONTEXT = {
  theme: 'light',
  displayMode: 'inline',
  locale: 'en-US',
  timeZone: 'UTC',
  platform: 'web',
  containerDimensions: { maxHeight: 2000, width: 640 },
};

let currentStep = 'start';
const diagnostics = [];

function step(name) {
  currentStep = name;
  console.log(`step: ${name}`);
}

// ---------- the agent ----------

async function connectAgent(base) {
  const client = new Client({ name: 'svc-browser-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { Authorization: 'Bearer browser-test' } },
  });
  await client.connect(transport);
  return client;
}

async function tool(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) {
    throw new StepFailure(`${name} answered an error result: ${JSON.stringify(result.structuredContent ?? result.content)}`);
  }
  return result;
}

async function readResource(client, uri) {
  const read = await client.readResource({ uri });
  const content = read.contents?.[0];
  check(content && typeof content.text === 'string', `resources/read ${uri}: no text content`);
  same(content.mimeType, 'text/html;profile=mcp-app', `resources/read ${uri} mimeType`);
  return { html: content.text, csp: content._meta?.ui?.csp ?? {} };
}

// ---------- the host page's server ----------

async function startHostServer() {
  const badgeJs = await readFile(path.join(HERE, 'gadgets', 'badge.js'), 'utf8');
  // Bytes that differ from the ones the manifest's bundleSri was computed over.
  const files = {
    '/gadgets/badge.js': ['text/javascript', badgeJs],
    '/gadgets/badge-tampered.js': ['text/javascript', badgeJs.replace('badge: ', 'tampered: ')],
    '/gadgets/badge.css': ['text/css', await readFile(path.join(HERE, 'gadgets', 'badge.css'), 'utf8')],
  };
  return startSharedHostServer({ port: HOST_PORT, files });
}

// ---------- the browser ----------

/** The policy each mounted card runs under (`null`: none), for the request audit. */
const policies = new Map();

/** The host page's server (set by `run`): serves the documents of frames mounted by URL. */
let hostServer = null;

/**
 * Mounts `resource` as a strict host does (srcdoc, origin null, the policy built from `csp`,
 * which is the resource's own declaration unless a step says otherwise; `null`: no policy).
 * `byUrl`: the same document and policy, served by the host page's server instead of srcdoc,
 * for steps whose WebSocket proxy (Playwright's routeWebSocket) needs a navigated frame.
 */
async function mountCard(page, { id, title, resource, csp = resource.csp, byUrl = false, toolInput, toolResult }) {
  policies.set(id, csp);
  let frameUrl;
  if (byUrl) {
    hostServer.frames.set(id, { html: resource.html, csp });
    frameUrl = `${hostServer.origin}/frame/${id}`;
  }
  await page.evaluate(
    (args) => window.svcHost.mount(args),
    { id, title, html: resource.html, csp, frameUrl, toolInput, toolResult, hostContext: HOST_CONTEXT },
  );
  const frame = await (await page.$(`#${id}`)).contentFrame();
  check(frame, `${id}: no frame`);
  return frame;
}

/** What the card's policy refused so far (recorded by the host page inside the frame). */
const violations = (frame) => frame.evaluate(() => window.svcViolations ?? []);

/** Waits until no card frame has moved or resized for a few polls in a row. */
async function layoutSteady(page) {
  let last = '';
  let steady = 0;
  await waitFor('the cards to stop resizing', async () => {
    const layout = await page.evaluate(() =>
      Array.from(document.querySelectorAll('iframe'), (f) => `${f.id}@${Math.round(f.getBoundingClientRect().top + window.scrollY)}+${f.offsetHeight}`).join(' '),
    );
    steady = layout === last ? steady + 1 : 0;
    last = layout;
    return steady >= 3;
  });
}

/**
 * A user's click on a card's control. Cards above it resize as their own streams arrive (the host
 * fits each frame to the size it reports), which can move the target between Playwright's
 * scroll and its click: the click then lands on nothing. So the layout must settle first, and a
 * click the control never received (seen from inside the frame) is made again; a click the
 * control did receive is never repeated.
 */
async function clickInCard(page, frame, selector) {
  for (let attempt = 1; ; attempt += 1) {
    await layoutSteady(page);
    await frame.evaluate((sel) => {
      window.svcTestClicked = false;
      document.addEventListener('click', (event) => {
        if (event.target instanceof Element && event.target.closest(sel)) window.svcTestClicked = true;
      }, { capture: true, once: true });
    }, selector);
    await frame.locator(selector).click();
    if (await frame.evaluate(() => window.svcTestClicked)) return;
    diagnostics.push(`click ${attempt} on ${selector} in ${frame.url()} did not reach it (the layout moved)`);
    check(attempt < 3, `three clicks on ${selector} never reached it`);
  }
}

const logItems = (frame) => frame.$$eval('section[data-channel="log"] li', (items) => items.map((li) => li.textContent.trim()));
const cardText = (frame) => frame.evaluate(() => document.body.innerText);
const liveState = (frame) => frame.evaluate(() => document.documentElement.dataset.svcLive ?? null);

async function screenshot(page, name) {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** One card's frame, once the host has fitted it to the size the card reported. */
async function cardShot(page, id, name, minHeight = 250) {
  const frame = page.locator(`#${id}`);
  await frame.scrollIntoViewIfNeeded();
  await waitFor(`${id} to be fitted to its reported size`, async () => {
    const reported = await page.evaluate((frameId) => window.svcHost.reportedHeight(frameId), id);
    const box = await frame.boundingBox();
    return reported > minHeight && box !== null && Math.abs(box.height - reported) <= 2;
  });
  await frame.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });
}

/** A new session of the test contract (a cache hit after the first): its args and tool result. */
async function renderFresh(agent, title) {
  const handshake = await tool(agent, 'svc_handshake', { intent: 'browser order approval', blueprintDraft: { contract: CONTRACT } });
  const args = { handshakeId: handshake.structuredContent.handshakeId, props: { title, status: 'pending' } };
  const result = await tool(agent, 'svc_render', args);
  same(result.structuredContent.outcome, 'rendered', `${title}: svc_render outcome`);
  return { sessionId: result.structuredContent.sessionId, args, result };
}

/** A person clicks approve (seen by svc_consume), the agent repaints (svc_update) and streams (svc_emit). */
async function exerciseCard(page, agent, frame, sessionId, label) {
  await waitFor(`${label}: the card to go live`, async () => (await liveState(frame)) === 'live');
  await frame.locator('form[data-intent="approve"] input').first().fill(`clicked in ${label}`);
  await clickInCard(page, frame, 'button[data-intent="approve"]');
  const consumed = await tool(agent, 'svc_consume', { sessionId, timeout: 10 });
  same((consumed.structuredContent.events ?? []).map((e) => [e.intent, e.actionData]), [['approve', { note: `clicked in ${label}` }]], `${label}: the click, delivered once`);
  await tool(agent, 'svc_update', { sessionId, kind: 'replace', props: { title: 'Order 42', status: `updated in ${label}` } });
  await waitFor(`${label}: svc_update to repaint the card`, async () => (await cardText(frame)).includes(`updated in ${label}`));
  await tool(agent, 'svc_emit', { sessionId, channel: 'log', payload: `emitted in ${label}` });
  await waitFor(`${label}: svc_emit to reach the card`, async () => (await logItems(frame)).at(-1) === `emitted in ${label}`);
}

/** Whether `url` falls inside a declared list (an origin, or an origin plus a path prefix). */
function declares(list, url) {
  if (url.startsWith('data:')) return true;
  const origin = new URL(url).origin;
  return (list ?? []).some((entry) => (new URL(entry).pathname.length > 1 ? url.startsWith(entry) : origin === new URL(entry).origin));
}

const RESOURCE_TYPES = new Set(['script', 'stylesheet', 'image', 'font', 'media']);

/** Every request a card made under a policy, checked against that policy's declaration. */
function auditRequests(requests) {
  const declaredConnects = [...policies.values()].filter(Boolean).flatMap((csp) => csp.connectDomains ?? []);
  const outside = [];
  for (const { card, type, url } of requests) {
    if (card === null) {
      // A socket (Playwright does not say which frame opened it): any card's declaration.
      if (!declares(declaredConnects, url)) outside.push(`${type} ${url}`);
      continue;
    }
    const csp = policies.get(card);
    if (!csp) continue; // no policy: nothing to audit
    const list = RESOURCE_TYPES.has(type) ? csp.resourceDomains : csp.connectDomains;
    if (!declares(list, url)) outside.push(`${card}: ${type} ${url}`);
  }
  return outside;
}

// ---------- the probe card ----------

// A card whose buttons send what a careless component might: an action over the server's
// 256 KiB frame limit, then an ordinary one. Each outcome of `useAction` lands in
// `window.svcOutcomes`. It throws while the agent's props say `explode`.
const PROBE =
  'import { jsx as _jsx, jsxs as _jsxs } from "react/jsx-runtime";\nimport { useAction, useProps } from "@svc/gadgets";\n' +
  'export default function Probe() {\n' +
  '  const props = useProps();\n  const approve = useAction("approve");\n' +
  '  if (props.status === "explode") throw new Error("boom on " + props.status);\n' +
  '  const send = (label, note) => approve({ note }).then((outcome) => { (window.svcOutcomes ??= []).push({ label, ...outcome }); });\n' +
  '  return _jsxs("div", { children: [\n' +
  '    _jsx("p", { "data-probe-status": "", children: "status: " + props.status }),\n' +
  '    _jsx("button", { "data-probe": "big", onClick: () => send("big", "x".repeat(300 * 1024)), children: "send 300 KiB" }),\n' +
  '    _jsx("button", { "data-probe": "small", onClick: () => send("small", "after the big one"), children: "send a note" }),\n' +
  '  ] });\n}\n';
const outcomes = (frame) => frame.evaluate(() => window.svcOutcomes ?? []);
const press = (frame, which) => frame.evaluate((probe) => document.querySelector(`[data-probe="${probe}"]`).click(), which);

// ---------- the flow ----------

async function run(base) {
  await mkdir(ARTIFACTS, { recursive: true });
  step('agent connects over MCP');
  const agent = await connectAgent(base);
  const host = await startHostServer();
  hostServer = host;
  const userDataDir = await mkdtemp(path.join(tmpdir(), 'svc-chromium-'));
  let context;
  try {
    step('launch Chromium');
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 720, height: 900 },
    });
    const page = context.pages()[0] ?? (await context.newPage());
    // The host forwards a view's tools/call to the server, for tools declared visible to apps.
    const appTools = new Set(
      (await agent.listTools()).tools.filter((t) => t._meta?.ui?.visibility?.includes('app')).map((t) => t.name),
    );
    const forwarded = [];
    await page.exposeFunction('svcForwardToolCall', async (params) => {
      forwarded.push(params.name);
      if (!appTools.has(params.name)) {
        return { isError: true, content: [{ type: 'text', text: `${params.name} is not visible to apps` }] };
      }
      return agent.callTool({ name: params.name, arguments: params.arguments ?? {} });
    });
    page.on('console', (message) => message.type() !== 'debug' && diagnostics.push(`console.${message.type()} ${message.location()?.url ?? ''}: ${message.text()}`));
    page.on('pageerror', (error) => diagnostics.push(`pageerror: ${error.message}`));
    // Client frames sent over the polling transport, and any request that failed, for the report.
    page.on('requestfailed', (request) => diagnostics.push(`request failed: ${request.method()} ${request.url().split('?')[0]}: ${request.failure()?.errorText}`));
    page.on('response', async (response) => {
      const request = response.request();
      if (!request.url().includes('/_svc/poll/')) return;
      if (request.method() === 'GET') {
        if (response.status() !== 200) diagnostics.push(`poll GET -> ${response.status()} ${(await response.text().catch(() => '')).slice(0, 200)}`);
        return;
      }
      if (request.method() !== 'POST') return;
      const body = await response.text().catch(() => '(no body)');
      diagnostics.push(`poll POST ${request.postData()?.slice(0, 120)} -> ${response.status()} ${body.slice(0, 200)}`);
    });
    // Every request a card makes, for the audit against what it declared.
    const requests = [];
    page.on('request', (request) => {
      const name = request.frame().name();
      if (name.startsWith('card-') || name.startsWith('cell-')) requests.push({ card: name, type: request.resourceType(), url: request.url() });
    });
    page.on('websocket', (socket) => requests.push({ card: null, type: 'websocket', url: socket.url() }));
    await page.goto(`${host.origin}/host.html`);
    await page.waitForFunction(() => document.documentElement.dataset.ready === 'true');

    step('agent renders a card');
    const handshake = await tool(agent, 'svc_handshake', { intent: 'browser order approval', blueprintDraft: { contract: CONTRACT } });
    const handshakeId = handshake.structuredContent.handshakeId;
    check(typeof handshakeId === 'string', `svc_handshake gave no handshakeId: ${JSON.stringify(handshake.structuredContent)}`);
    const renderArgs = { handshakeId, props: { title: 'Order 42', status: 'pending' } };
    const rendered = await tool(agent, 'svc_render', renderArgs);
    same(rendered.structuredContent.outcome, 'rendered', 'svc_render outcome');
    const sessionId = rendered.structuredContent.sessionId;
    check(rendered._meta?.['ai.svc/render']?.wsToken, `svc_render result has no _meta['ai.svc/render'] slice: ${JSON.stringify(rendered._meta)}`);
    // Emitted before any card is mounted: the first subscribe must replay it.
    await tool(agent, 'svc_emit', { sessionId, channel: 'log', payload: 'line 1' });

    step('host mounts the per-render resource');
    const resource = await readResource(agent, `ui://svc/render/${sessionId}`);
    const card = await mountCard(page, { id: 'card-render', title: `ui://svc/render/${sessionId}`, resource, toolInput: renderArgs, toolResult: rendered });
    await waitFor('the card to show its props', async () => (await cardText(card)).includes('Order 42') && (await cardText(card)).includes('pending'));
    await waitFor('the pre-mount emit to be replayed', async () => JSON.stringify(await logItems(card)) === JSON.stringify(['line 1']));
    const themeBg = await card.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue('--svc-color-bg').trim());
    check(themeBg !== '', 'the theme variable --svc-color-bg is not applied on the card root');
    await waitFor('the host to receive ui/notifications/size-changed', async () => (await page.evaluate(() => window.svcHost.reportedHeight('card-render'))) > 0);
    await screenshot(page, '01-mounted');

    step('user sets the context slot and clicks approve');
    await card.locator('label[data-slot="tab"] input').fill('details');
    await card.locator('form[data-intent="approve"] input').first().fill('ship it');
    await clickInCard(page, card, 'button[data-intent="approve"]');
    const consumed = await tool(agent, 'svc_consume', { sessionId, timeout: 10 });
    const events = consumed.structuredContent.events ?? [];
    same(events.length, 1, 'svc_consume event count after one click');
    same(events[0].type, 'action', 'event type');
    same(events[0].intent, 'approve', 'event intent');
    same(events[0].actionData, { note: 'ship it' }, 'event actionData');
    same(events[0].uiContext, { tab: 'details' }, 'event uiContext');
    check(/^[0-9a-f]{8}$/.test(events[0].actionId ?? ''), `event actionId is not 8 hex: ${events[0].actionId}`);
    // The card echoed the host context (host_context_observed); svc_consume hands it back.
    same(consumed.structuredContent.client?.displayMode, HOST_CONTEXT.displayMode, 'svc_consume client.displayMode');
    same(consumed.structuredContent.client?.locale, HOST_CONTEXT.locale, 'svc_consume client.locale');
    await screenshot(page, '02-approved');

    step('agent updates the props');
    await tool(agent, 'svc_update', { sessionId, kind: 'replace', props: { title: 'Order 42', status: 'approved by agent' } });
    await waitFor('the card to repaint with the new props', async () => (await cardText(card)).includes('approved by agent'));
    await screenshot(page, '03-updated');

    step('agent streams items');
    await tool(agent, 'svc_emit', { sessionId, channel: 'log', payload: 'line 2' });
    await tool(agent, 'svc_emit', { sessionId, channel: 'log', payload: 'line 3' });
    await waitFor('streamed items in the card', async () => JSON.stringify(await logItems(card)) === JSON.stringify(['line 1', 'line 2', 'line 3']));
    await screenshot(page, '04-streamed');

    step('the connection drops; the agent emits and the user clicks meanwhile');
    same(await liveState(card), 'live', 'live state before the outage');
    await context.setOffline(true);
    await waitFor('the card to notice the outage', async () => (await liveState(card)) === 'reconnecting');
    await tool(agent, 'svc_emit', { sessionId, channel: 'log', payload: 'line 4' });
    await tool(agent, 'svc_emit', { sessionId, channel: 'log', payload: 'line 5' });
    await card.locator('form[data-intent="approve"] input').first().fill('offline click');
    await clickInCard(page, card, 'button[data-intent="approve"]');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    same(await logItems(card), ['line 1', 'line 2', 'line 3'], 'items while offline');
    await screenshot(page, '05-offline');

    step('the connection comes back; the card resumes');
    await context.setOffline(false);
    await waitFor('the card to resubscribe', async () => (await liveState(card)) === 'live');
    const expected = ['line 1', 'line 2', 'line 3', 'line 4', 'line 5'];
    await waitFor('the missed items, once each', async () => JSON.stringify(await logItems(card)) === JSON.stringify(expected));
    const resent = await tool(agent, 'svc_consume', { sessionId, timeout: 10 });
    const resentEvents = resent.structuredContent.events ?? [];
    same(resentEvents.map((e) => [e.intent, e.actionData]), [['approve', { note: 'offline click' }]], 'the action clicked offline, delivered once');
    await tool(agent, 'svc_emit', { sessionId, channel: 'log', payload: 'line 6' });
    await waitFor('the live tail after the resume', async () => JSON.stringify(await logItems(card)) === JSON.stringify([...expected, 'line 6']));
    const extra = await tool(agent, 'svc_consume', { sessionId, timeout: 2 });
    same(extra.structuredContent.events ?? [], [], 'events after the resend (no duplicate)');
    same(await logItems(card), [...expected, 'line 6'], 'items after the resume (no double)');
    await screenshot(page, '06-resumed');

    step('the host switches to dark mode');
    await page.evaluate(() => window.svcHost.changeHostContext('card-render', { ...{ theme: 'dark' } }));
    await waitFor('the card to follow the host theme', async () => (await card.evaluate(() => document.documentElement.dataset.svcMode)) === 'dark');

    step('host mounts the shell with the tool result');
    const shell = await readResource(agent, 'ui://svc/render');
    check(!shell.html.includes(sessionId), 'the shell document is render-independent');
    const shellCard = await mountCard(page, { id: 'card-shell', title: 'ui://svc/render (shell)', resource: shell, toolInput: renderArgs, toolResult: rendered });
    await waitFor('the shell to mount the render from the tool result', async () => (await cardText(shellCard)).includes('approved by agent'));
    await waitFor('the shell card to replay the stream', async () => JSON.stringify(await logItems(shellCard)) === JSON.stringify([...expected, 'line 6']));
    await cardShot(page, 'card-shell', '07-shell');

    step("a shell of someone else's loads the runtime from runtimeUrl and mounts a component without links");
    // /_svc/iframe-runtime.js carries the module lexer in front of the runtime, for shells like
    // this one that hand it a component without the server's links.
    const runtimeUrl = rendered._meta['ai.svc/render'].runtimeUrl;
    check(typeof runtimeUrl === 'string' && runtimeUrl.startsWith(base), `runtimeUrl ${runtimeUrl}`);
    const embedded = JSON.parse(/<script type="application\/json" id="svc-bootstrap">([\s\S]*?)<\/script>/.exec((await readResource(agent, `ui://svc/render/${sessionId}`)).html)[1]);
    check(embedded.component.links, 'the per-render bootstrap carries the links of its component');
    delete embedded.component.links;
    const foreignShell = {
      html: '<!doctype html><html><head><meta charset="utf-8"></head><body><div id="svc-root"></div>' +
        `<script type="application/json" id="svc-bootstrap">${JSON.stringify(embedded).replace(/</g, '\\u003c')}</script>` +
        `<script type="module" src="${runtimeUrl}"></script></body></html>`,
      csp: { connectDomains: resource.csp.connectDomains, resourceDomains: [new URL(runtimeUrl).origin] },
    };
    const foreignCard = await mountCard(page, { id: 'card-foreign-shell', title: 'runtimeUrl in a shell of its own', resource: foreignShell, toolInput: renderArgs, toolResult: rendered });
    await waitFor('the runtime loaded by URL to paint the component', async () => (await cardText(foreignCard)).includes('approved by agent'));
    await page.evaluate(() => document.getElementById('card-foreign-shell')?.remove());

    step('host mounts a pinned history epoch');
    const pinned = await readResource(agent, `ui://svc/render/${sessionId}#1`);
    const historyCard = await mountCard(page, { id: 'card-epoch-1', title: `ui://svc/render/${sessionId}#1`, resource: pinned, toolInput: renderArgs, toolResult: rendered });
    await waitFor('the history card to keep epoch 1 props', async () => {
      const text = await cardText(historyCard);
      return text.includes('pending') && !text.includes('approved by agent') && (await liveState(historyCard)) === 'live';
    });
    await cardShot(page, 'card-epoch-1', '08-history-epoch-1');

    step('a card whose wsToken is refused refreshes it through the host');
    // A document read long ago carries an expired token; the server refuses it like this one.
    const stale = { ...resource, html: resource.html.replace(/"wsToken":"[^"]+"/, '"wsToken":"expired.token"') };
    check(stale.html !== resource.html, 'the per-render document embeds a wsToken');
    const staleCard = await mountCard(page, { id: 'card-stale-token', title: 'stale wsToken', resource: stale, toolInput: renderArgs, toolResult: rendered });
    await waitFor('the card to subscribe with a refreshed token', async () => (await liveState(staleCard)) === 'live' && (await cardText(staleCard)).includes('approved by agent'));
    check(forwarded.includes('svc_runtime_refresh_ws_token'), `the card did not call svc_runtime_refresh_ws_token through the host (calls: ${JSON.stringify(forwarded)})`);

    // The strict-host matrix: each cell a fresh render of its own (a cache hit), mounted the way
    // that kind of host mounts it, then used as a person and an agent would.
    step('matrix (a): the shell under the policy from its declared csp, fed only by the tool result');
    {
      const cell = await renderFresh(agent, 'matrix a');
      const shellCell = await mountCard(page, { id: 'cell-a-shell', title: '(a) shell, declared csp', resource: shell, toolInput: cell.args, toolResult: cell.result });
      await exerciseCard(page, agent, shellCell, cell.sessionId, 'cell a');
      same(await violations(shellCell), [], '(a) what the policy refused');
    }

    step('matrix (b): the per-render resource under the policy from its declared csp');
    {
      const cell = await renderFresh(agent, 'matrix b');
      const own = await readResource(agent, `ui://svc/render/${cell.sessionId}`);
      const perRender = await mountCard(page, { id: 'cell-b-render', title: '(b) per-render, declared csp', resource: own, toolInput: cell.args, toolResult: cell.result });
      await exerciseCard(page, agent, perRender, cell.sessionId, 'cell b');
      same(await violations(perRender), [], '(b) what the policy refused');
    }

    step('matrix (c): a host that grants no domains: the shell still draws from the tool result');
    {
      const cell = await renderFresh(agent, 'matrix c');
      const closed = await mountCard(page, { id: 'cell-c-no-domains', title: "(c) shell, 'unsafe-inline' only, no connect", resource: shell, csp: {}, toolInput: cell.args, toolResult: cell.result });
      await waitFor('(c) the card to draw its props', async () => (await cardText(closed)).includes('matrix c') && (await cardText(closed)).includes('pending'));
      await waitFor('(c) the card to say live updates are off', async () => (await liveState(closed)) === 'off' && (await cardText(closed)).includes('Live updates are off'));
      const refused = await violations(closed);
      check(refused.every((v) => v.directive === 'connect-src'), `(c) the policy refused more than connections: ${JSON.stringify(refused)}`);
      check(refused.some((v) => v.blocked.startsWith('ws://')), `(c) the card never tried its socket: ${JSON.stringify(refused)}`);
      await cardShot(page, 'cell-c-no-domains', '13-no-domains', 20);
    }

    step('matrix (d): a host that applies no policy at all');
    {
      const cell = await renderFresh(agent, 'matrix d');
      const own = await readResource(agent, `ui://svc/render/${cell.sessionId}`);
      const open = await mountCard(page, { id: 'cell-d-no-policy', title: '(d) per-render, no CSP', resource: own, csp: null, toolInput: cell.args, toolResult: cell.result });
      await exerciseCard(page, agent, open, cell.sessionId, 'cell d');
    }

    step('a host that blocks the WebSocket still shows the card from the embedded bootstrap');
    const current = await readResource(agent, `ui://svc/render/${sessionId}`);
    const blocked = await mountCard(page, { id: 'card-no-socket', title: 'connect-src blocks /ws', resource: { ...current, csp: { ...current.csp, connectDomains: [] } }, toolInput: renderArgs, toolResult: rendered });
    await waitFor('the card to paint without its socket', async () => (await cardText(blocked)).includes('approved by agent'));
    await waitFor('the card to say live updates are off', async () => (await liveState(blocked)) === 'off');

    // Before any step routes WebSockets: Playwright's route replaces the socket in srcdoc frames,
    // where the policy then never refuses it.
    step('useAction settles with a failure when the host lets the card connect nowhere');
    {
      const off = await renderFresh(agent, 'probe off');
      const slice = off.result._meta['ai.svc/render'];
      const toolResult = { ...off.result, _meta: { ...off.result._meta, 'ai.svc/render': { ...slice, component: { ...slice.component, code: PROBE } } } };
      const offCard = await mountCard(page, { id: 'card-off-action', title: 'no domains: actions settle', resource: shell, csp: {}, toolInput: off.args, toolResult });
      await waitFor('the probe to paint and say live updates are off', async () => ((await liveState(offCard)) === 'off' && (await offCard.$('[data-probe="small"]')) !== null) || `${await liveState(offCard)}: ${await cardText(offCard)}`);
      await press(offCard, 'small');
      await waitFor('the action to settle as not connected', async () => {
        const settled = (await outcomes(offCard)).find((o) => o.label === 'small');
        return (settled?.ok === false && settled.code === 'NOT_CONNECTED') || JSON.stringify(settled ?? null);
      });
    }

    step('a host whose CSP forbids the WebSocket: the card falls back to pollingUrl');
    // connect-src names only the polling path: ws://…/ws is refused, so the runtime must poll.
    const pollingOnly = { ...current, csp: { ...current.csp, connectDomains: [`${base}/_svc/poll/`] } };
    const polled = await mountCard(page, { id: 'card-polling', title: 'connect-src allows only pollingUrl', resource: pollingOnly, toolInput: renderArgs, toolResult: rendered });
    const transport = (frame) => frame.evaluate(() => `${document.documentElement.dataset.svcTransport}/${document.documentElement.dataset.svcLive}`);
    await waitFor('the card to go live over HTTP polling', async () => (await transport(polled)) === 'polling/live');
    check(
      (await violations(polled)).some((v) => v.directive === 'connect-src' && v.blocked.startsWith('ws://')),
      'the polling card never tried its WebSocket (the fallback path was not exercised)',
    );
    await waitFor('the polled card to replay the stream', async () => JSON.stringify(await logItems(polled)) === JSON.stringify([...expected, 'line 6']));
    await tool(agent, 'svc_update', { sessionId, kind: 'replace', props: { title: 'Order 42', status: 'updated while polling' } });
    await waitFor('svc_update to repaint the polled card', async () => (await cardText(polled)).includes('updated while polling'));
    await tool(agent, 'svc_emit', { sessionId, channel: 'log', payload: 'line 7' });
    await waitFor('svc_emit to reach the polled card', async () => JSON.stringify(await logItems(polled)) === JSON.stringify([...expected, 'line 6', 'line 7']));
    await polled.locator('form[data-intent="approve"] input').first().fill('clicked while polling');
    await clickInCard(page, polled, 'button[data-intent="approve"]');
    const polledConsume = await tool(agent, 'svc_consume', { sessionId, timeout: 10 });
    same((polledConsume.structuredContent.events ?? []).map((e) => [e.intent, e.actionData]), [['approve', { note: 'clicked while polling' }]], 'the click of the polled card, delivered once');
    same(await transport(polled), 'polling/live', 'the polled card stays on polling');
    await cardShot(page, 'card-polling', '11-polling-fallback');

    step('a WebSocket that was blocked and works again: the polled card goes back to it');
    // From here on, new sockets pass through a proxy: it refuses them while `sockets` is
    // 'blocked' (a proxy without WebSocket support), and later swaps the ack's component code
    // (the session's own in `componentFor`, else the next of `brokenModules`). It counts the
    // sockets each session's cards open and the action frames they send, and answers a session's
    // first subscribe itself with the error of `refuseFirstSubscribe`, if it names one. For a
    // session of `loseBindingAtFirstAction` it plays a server whose replay failed after the ack:
    // the first action is answered `INTERNAL` (no clientSeq) and `NOT_SUBSCRIBED`, and every later
    // frame (but ping) too, until the card subscribes again on that socket.
    let sockets = 'blocked';
    let swaps = 0;
    const brokenModules = [];
    const componentFor = new Map();
    const socketsOf = new Map();
    const actionsSent = [];
    const refuseFirstSubscribe = new Map();
    const subscribedAt = new Map();
    const loseBindingAtFirstAction = new Set();
    /** Per session, the subscribes on each of its sockets, in opening order. */
    const subscribesPerSocket = new Map();
    const NOT_SUBSCRIBED = JSON.stringify({ type: 'error', payload: { code: 'NOT_SUBSCRIBED', message: 'send subscribe first' } });
    await context.routeWebSocket(/\/ws$/, (ws) => {
      if (sockets === 'blocked') {
        ws.close({ code: 1011, reason: 'no WebSocket here' });
        return;
      }
      const server = ws.connectToServer();
      let subscribesHere = null;
      let unbound = false;
      ws.onMessage((message) => {
        const frame = JSON.parse(String(message));
        if (frame.type === 'subscribe') {
          const id = frame.payload.sessionId;
          socketsOf.set(id, (socketsOf.get(id) ?? 0) + 1);
          if (subscribesHere === null) {
            subscribesHere = [...(subscribesPerSocket.get(id) ?? []), 0];
            subscribesPerSocket.set(id, subscribesHere);
          }
          subscribesHere[subscribesHere.length - 1] += 1;
          subscribedAt.set(id, [...(subscribedAt.get(id) ?? []), Date.now()]);
          const refusal = refuseFirstSubscribe.get(id);
          if (refusal) {
            refuseFirstSubscribe.delete(id);
            ws.send(JSON.stringify({ type: 'error', payload: refusal }));
            return;
          }
          unbound = false;
        } else if (unbound && frame.type !== 'ping') {
          ws.send(NOT_SUBSCRIBED);
          return;
        }
        if (frame.type === 'action' && loseBindingAtFirstAction.delete(frame.payload.sessionId)) {
          unbound = true;
          ws.send(JSON.stringify({ type: 'error', payload: { code: 'INTERNAL', message: 'internal error' } }));
          ws.send(NOT_SUBSCRIBED);
          return;
        }
        if (frame.type === 'action') actionsSent.push({ sessionId: frame.payload.sessionId, bytes: String(message).length });
        server.send(message);
      });
      // A swapped code comes without the server's links: these cards' documents carry the module
      // lexer (their contract declares gadget packages), which reads it instead.
      const swapCode = (frame, code) => {
        frame.payload.component.code = code;
        delete frame.payload.component.links;
      };
      server.onMessage((message) => {
        const frame = JSON.parse(String(message));
        if (frame.type === 'ack' && componentFor.has(frame.payload.sessionId)) swapCode(frame, componentFor.get(frame.payload.sessionId));
        else if (frame.type === 'ack' && sockets === 'swap' && swaps < brokenModules.length) swapCode(frame, brokenModules[swaps++]);
        ws.send(JSON.stringify(frame));
      });
    });
    const returning = await mountCard(page, { id: 'card-returns', byUrl: true, title: 'the WebSocket comes back', resource: current, toolInput: renderArgs, toolResult: rendered });
    await waitFor('the card to poll while sockets are refused', async () => (await transport(returning)) === 'polling/live' || `transport ${await transport(returning)}`);
    sockets = 'open';
    // The first probe comes 5 s after polling began.
    await waitFor('the card to return to its WebSocket', async () => (await transport(returning)) === 'websocket/live', 30_000);
    await tool(agent, 'svc_emit', { sessionId, channel: 'log', payload: 'line 8' });
    await waitFor('svc_emit to reach the card over its WebSocket again', async () => (await logItems(returning)).at(-1) === 'line 8');
    same(await logItems(returning), [...expected, 'line 6', 'line 7', 'line 8'], 'no item lost or doubled across the switch');
    await page.evaluate(() => document.getElementById('card-returns')?.remove());

    step('an action over the frame limit is refused once; the card stays live and a later action reaches svc_consume');
    const probe = await renderFresh(agent, 'probe');
    componentFor.set(probe.sessionId, PROBE);
    const probeCard = await mountCard(page, { id: 'card-probe', byUrl: true, title: 'oversized action', resource: await readResource(agent, `ui://svc/render/${probe.sessionId}`), toolInput: probe.args, toolResult: probe.result });
    await waitFor('the probe component to go live', async () => (await liveState(probeCard)) === 'live' && (await probeCard.$('[data-probe="big"]')) !== null);
    await press(probeCard, 'big');
    await waitFor('the oversized action to settle as refused', async () => {
      const settled = (await outcomes(probeCard)).find((o) => o.label === 'big');
      return (settled?.ok === false && settled.code === 'FRAME_TOO_LARGE') || JSON.stringify(settled ?? null);
    });
    await waitFor('the card to say the action did not reach the agent', async () => (await cardText(probeCard)).includes('"approve" did not reach the agent: FRAME_TOO_LARGE') || await cardText(probeCard));
    await press(probeCard, 'small');
    const afterBig = await tool(agent, 'svc_consume', { sessionId: probe.sessionId, timeout: 10 });
    same((afterBig.structuredContent.events ?? []).map((e) => [e.intent, e.actionData]), [['approve', { note: 'after the big one' }]], 'what reached the agent after the oversized action');
    await waitFor('the later action to settle as stored', async () => (await outcomes(probeCard)).find((o) => o.label === 'small')?.ok === true);
    same(await liveState(probeCard), 'live', 'the probe card after the oversized action');
    check(!(await cardText(probeCard)).includes('Reconnecting'), `the probe card is reconnecting: ${await cardText(probeCard)}`);
    check((socketsOf.get(probe.sessionId) ?? 0) === 1, `the probe card opened ${socketsOf.get(probe.sessionId)} sockets (it reconnected over the oversized action)`);
    const oversized = actionsSent.filter((a) => a.sessionId === probe.sessionId && a.bytes > 256 * 1024).length;
    check(oversized === 0, `the oversized action went over the socket ${oversized} times (the card refuses it unsent)`);
    await waitFor('a later stored action to end the notice of the refused one', async () => !(await cardText(probeCard)).includes('FRAME_TOO_LARGE') || await cardText(probeCard));

    step('a subscribe answered SERVER_BUSY before its ack goes again after retryAfterSeconds; one refused with BAD_FRAME says so at once');
    // The proxy answers as the server does when the replay budget stays taken for 10 s
    // (docs/live-channel.md): the card must not sit out its 15 s connect limit.
    const busy = await renderFresh(agent, 'busy before the ack');
    refuseFirstSubscribe.set(busy.sessionId, { code: 'SERVER_BUSY', message: 'the server is replaying to many sockets; subscribe again shortly', retryAfterSeconds: 1 });
    const busyCard = await mountCard(page, { id: 'card-busy', byUrl: true, title: 'SERVER_BUSY before the ack', resource: await readResource(agent, `ui://svc/render/${busy.sessionId}`), toolInput: busy.args, toolResult: busy.result });
    await waitFor('the card answered SERVER_BUSY to go live', async () => (await liveState(busyCard)) === 'live' || `live state ${await liveState(busyCard)}`, 10_000);
    const [refusedAt, againAt] = subscribedAt.get(busy.sessionId) ?? [];
    same(socketsOf.get(busy.sessionId), 2, 'subscribes of the card answered SERVER_BUSY');
    check(againAt - refusedAt >= 1_000 && againAt - refusedAt < 5_000, `it subscribed again ${againAt - refusedAt} ms after SERVER_BUSY (retryAfterSeconds 1, plus the backoff)`);
    await waitFor('the busy card to paint its props', async () => (await cardText(busyCard)).includes('busy before the ack') || await cardText(busyCard));
    await page.evaluate(() => document.getElementById('card-busy')?.remove());
    const badFrame = await renderFresh(agent, 'bad frame');
    const badFrameMessage = 'subscribe payload: role: `robot` is not `user` or `agent`';
    refuseFirstSubscribe.set(badFrame.sessionId, { code: 'BAD_FRAME', message: badFrameMessage });
    const refusedCard = await mountCard(page, { id: 'card-refused', byUrl: true, title: 'BAD_FRAME before the ack', resource: await readResource(agent, `ui://svc/render/${badFrame.sessionId}`), toolInput: badFrame.args, toolResult: badFrame.result });
    await waitFor('the refused card to say why', async () => (await cardText(refusedCard)).includes(`The live channel closed: BAD_FRAME: ${badFrameMessage}`) || await cardText(refusedCard), 5_000);
    same(await liveState(refusedCard), 'failed', 'the live state of the card refused with BAD_FRAME');
    same(socketsOf.get(badFrame.sessionId), 1, 'subscribes of the card refused with BAD_FRAME (the same one would be refused again)');
    await cardShot(page, 'card-refused', '14-subscribe-refused', 20);
    await page.evaluate(() => document.getElementById('card-refused')?.remove());

    step('a socket unbound after its ack (INTERNAL, then NOT_SUBSCRIBED) is subscribed again; the action sent meanwhile is stored once');
    // As the server does when the store fails in the middle of the subscribe's replay
    // (docs/live-channel.md): the card must not stay "live" while nothing is bound.
    const lost = await renderFresh(agent, 'binding lost');
    componentFor.set(lost.sessionId, PROBE);
    loseBindingAtFirstAction.add(lost.sessionId);
    const lostCard = await mountCard(page, { id: 'card-lost', byUrl: true, title: 'binding lost after the ack', resource: await readResource(agent, `ui://svc/render/${lost.sessionId}`), toolInput: lost.args, toolResult: lost.result });
    await waitFor('the card to go live', async () => ((await liveState(lostCard)) === 'live' && (await lostCard.$('[data-probe="small"]')) !== null) || `live state ${await liveState(lostCard)}`);
    await press(lostCard, 'small');
    const afterLoss = await tool(agent, 'svc_consume', { sessionId: lost.sessionId, timeout: 10 });
    same((afterLoss.structuredContent.events ?? []).map((e) => [e.intent, e.actionData]), [['approve', { note: 'after the big one' }]], 'what reached the agent from the card whose binding was lost');
    await waitFor('the action to settle as stored', async () => (await outcomes(lostCard)).find((o) => o.label === 'small')?.ok === true || JSON.stringify(await outcomes(lostCard)));
    same(subscribesPerSocket.get(lost.sessionId), [2], 'subscribes on each socket of the card (one socket, subscribed again on it)');
    same(await liveState(lostCard), 'live', 'the live state of the card subscribed again');
    await waitFor('the notice of the INTERNAL to end at the new ack', async () => !(await cardText(lostCard)).includes('INTERNAL') || await cardText(lostCard));
    await page.evaluate(() => document.getElementById('card-lost')?.remove());

    step('a card that threw paints again when svc_update brings good props');
    await tool(agent, 'svc_update', { sessionId: probe.sessionId, kind: 'replace', props: { title: 'probe', status: 'explode' } });
    await waitFor('the error boundary message', async () => (await cardText(probeCard)).includes('This card failed to render: boom on explode') || await cardText(probeCard));
    await tool(agent, 'svc_update', { sessionId: probe.sessionId, kind: 'replace', props: { title: 'probe', status: 'fine again' } });
    await waitFor('the card to paint the good props', async () => {
      const text = await cardText(probeCard);
      return (text.includes('status: fine again') && !text.includes('failed to render')) || text;
    });
    await page.evaluate(() => document.getElementById('card-probe')?.remove());

    step('a component that throws, and one importing an unprovided module, show readable errors');
    sockets = 'swap';
    brokenModules.push(
      'import { jsx as _jsx } from "react/jsx-runtime";\nimport { useProps } from "@svc/gadgets";\n' +
        'export default function Broken() { const props = useProps(); throw new Error("boom while rendering " + props.title); }\n',
      'import { jsx as _jsx } from "react/jsx-runtime";\nimport pad from "left-pad";\nexport default function Padded() { return _jsx("p", { children: pad("x", 3) }); }\n',
    );
    const throwing = await mountCard(page, { id: 'card-throws', byUrl: true, title: 'component throws', resource, toolInput: renderArgs, toolResult: rendered });
    await waitFor('the error boundary message', async () => (await cardText(throwing)).includes('This card failed to render: boom while rendering Order 42'));
    const unprovided = await mountCard(page, { id: 'card-unprovided', byUrl: true, title: 'unprovided import', resource, toolInput: renderArgs, toolResult: rendered });
    await waitFor('the unprovided-import message', async () => (await cardText(unprovided)).includes('imports "left-pad", which this mount does not provide'));

    step('a component importing a declared gadget package shows the gadget; a tampered bundle shows an integrity error');
    if (!HOST_PORT) {
      // Run by hand without browser.rs's manifest: the server declares no packages to load.
      console.log('card-flow: gadget-bundle step skipped (SVC_BROWSER_HOST_PORT unset, see tests/tests/blackbox/browser.rs)');
    } else {
      const importing = (pkg) =>
        `import { jsx as _jsx } from "react/jsx-runtime";\nimport { useProps } from "@svc/gadgets";\nimport { Badge } from "${pkg}";\n` +
        'export default function WithBadge() { const props = useProps(); return _jsx("p", { children: _jsx(Badge, { label: props.title }) }); }\n';
      brokenModules.push(importing('@svc-test/badge'), importing('@svc-test/badge-tampered'));
      const badged = await mountCard(page, { id: 'card-gadget', byUrl: true, title: 'declared gadget', resource, toolInput: renderArgs, toolResult: rendered });
      await waitFor('the gadget to render inside the card', async () => (await cardText(badged)).includes('badge: Order 42 (1)'));
      const border = await badged.$eval('[data-gadget="badge"]', (el) => getComputedStyle(el).borderTopStyle);
      same(border, 'dashed', "the package's styleUrl styles the gadget");
      const tampered = await mountCard(page, { id: 'card-tampered', byUrl: true, title: 'tampered gadget', resource, toolInput: renderArgs, toolResult: rendered });
      await waitFor('the integrity error', async () => (await cardText(tampered)).includes('the gadget package "@svc-test/badge-tampered" failed its integrity check') || await cardText(tampered));
      check(!(await cardText(tampered)).includes('tampered: '), 'the tampered bundle never ran');
      await cardShot(page, 'card-gadget', '12-declared-gadget', 20);
    }
    await cardShot(page, 'card-throws', '10-component-throws', 20);
    await screenshot(page, '09-host-page');

    step('every script, style and connection of the cards fell inside what they declared');
    check(requests.some((r) => r.type === 'websocket'), 'no socket was recorded: the audit saw nothing');
    same(auditRequests(requests), [], 'requests outside the declared domains');
    for (const frame of page.frames()) {
      const name = frame.name();
      if (!name.startsWith('card-') && !name.startsWith('cell-')) continue;
      const refused = (await violations(frame)).filter((v) => v.directive !== 'connect-src');
      same(refused, [], `${name}: what its policy refused besides connections`);
    }
  } catch (error) {
    // The page as it was when a step failed, for the report.
    const page = context?.pages()[0];
    if (page) {
      await screenshot(page, 'failure').catch(() => {});
      await page.locator('iframe').last().screenshot({ path: path.join(ARTIFACTS, 'failure-last-card.png') }).catch(() => {});
    }
    throw error;
  } finally {
    await context?.close().catch(() => {});
    await host.close();
    await rm(userDataDir, { recursive: true, force: true });
    await agent.close().catch(() => {});
  }
}

const base = process.argv[2];
if (!base) {
  console.error('usage: node card-flow.mjs <base-url>');
  process.exit(2);
}
try {
  await run(base.replace(/\/+$/, ''));
  console.log('card-flow: all steps passed');
} catch (error) {
  console.error(`card-flow FAILED at step "${currentStep}": ${error instanceof StepFailure ? error.message : error.stack ?? error}`);
  if (diagnostics.length > 0) console.error(`browser console:\n  ${diagnostics.slice(-40).join('\n  ')}`);
  console.error(`screenshots: ${ARTIFACTS}`);
  process.exit(1);
}
