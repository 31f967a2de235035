#!/usr/bin/env node
// The built-in generator's gallery in a real browser: every fixture contract of
// gallery-fixtures.mjs rendered by the real `svc` server, mounted by an MCP-Apps host page
// (ext-apps AppBridge, sandboxed srcdoc iframe under the resource's declared CSP) at 720 px and
// 380 px, with assertions on what a person sees and on what the agent receives.
//
// Usage: node tests/browser/gallery.mjs <base-url> [--docs DIR]
//        --docs: after every step passed, copy each fixture's 720 px shot to DIR and write
//        DIR/README.md (each card beside its contract); `bash tests/browser/gallery-docs.sh` does it
//        for docs/gallery/ against a fresh server.
// Env:   SVC_CHROMIUM=/path/to/chromium (default /usr/bin/chromium; never downloads a browser)
// Screenshots: ./artifacts/gallery/<fixture>-<width>.png and <fixture>-720-dark.png (gitignored,
// kept by CI). Every card, at 380 px and at 720 px light and dark, is also checked by axe-core
// (node_modules/axe-core, injected over CDP) for serious and critical violations, and tabbed
// through: every control takes focus with a visible ring.

import { createServer } from 'node:http';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, StepFailure, WAIT_MS, check, same, waitFor } from './steps.mjs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { FIXTURES } from './gallery-fixtures.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ARTIFACTS = path.join(HERE, 'artifacts', 'gallery');
const WIDE = 720;
const NARROW = 380;

let currentStep = 'start';
const diagnostics = [];

function step(name) {
  currentStep = name;
  console.log(`step: ${name}`);
}

// ---------- the agent ----------

async function connectAgent(base) {
  const client = new Client({ name: 'svc-gallery-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: 'Bearer gallery-test' } } }),
  );
  return client;
}

async function tool(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new StepFailure(`${name} answered an error result: ${JSON.stringify(result.structuredContent ?? result.content)}`);
  return result;
}

/** svc_consume's events for a session (drains them). */
async function consume(agent, sessionId, timeout) {
  const consumed = await tool(agent, 'svc_consume', { sessionId, timeout });
  return consumed.structuredContent.events ?? [];
}

// ---------- the host page ----------

async function startHostServer() {
  const hostHtml = await readFile(path.join(HERE, 'host.html'), 'utf8');
  const bundled = await build({
    stdin: {
      contents: "export { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';",
      resolveDir: HERE,
      loader: 'js',
    },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
  });
  const files = {
    '/host.html': ['text/html', hostHtml],
    '/vendor/app-bridge.js': ['text/javascript', bundled.outputFiles[0].text],
    '/vendor/host-policy.js': ['text/javascript', await readFile(path.join(HERE, 'host-policy.js'), 'utf8')],
  };
  const server = createServer((req, res) => {
    const file = files[new URL(req.url, 'http://host').pathname];
    if (file) res.writeHead(200, { 'content-type': `${file[0]}; charset=utf-8` }).end(file[1]);
    else res.writeHead(404).end('not found');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** Renders a fixture and mounts it in a fresh frame `WIDE` px wide. */
async function mountFixture(page, agent, fixture) {
  const handshake = await tool(agent, 'svc_handshake', { intent: fixture.intent, blueprintDraft: { contract: fixture.contract } });
  const args = { handshakeId: handshake.structuredContent.handshakeId, props: fixture.props };
  const rendered = await tool(agent, 'svc_render', args);
  same(rendered.structuredContent.outcome, 'rendered', `${fixture.name}: svc_render outcome`);
  const sessionId = rendered.structuredContent.sessionId;
  const read = await agent.readResource({ uri: `ui://svc/render/${sessionId}` });
  const content = read.contents[0];
  const id = `card-${fixture.name}`;
  const hostContext = { theme: 'light', displayMode: 'inline', locale: 'en-US', timeZone: 'UTC', platform: 'web', containerDimensions: { maxHeight: 2000, width: WIDE } };
  await page.evaluate(
    (mount) => window.svcHost.mount(mount),
    { id, title: fixture.name, html: content.text, csp: content._meta?.ui?.csp ?? {}, toolInput: args, toolResult: rendered, hostContext },
  );
  const frame = await (await page.$(`#${id}`)).contentFrame();
  await waitFor(`${fixture.name}: the card to go live`, async () => (await frame.evaluate(() => document.documentElement.dataset.svcLive ?? null)) === 'live');
  // No fixture declares a gadget package: its document leaves the module lexer out, and the
  // runtime rewrites the component by the links the server sent with it.
  same(await frame.evaluate(() => typeof globalThis.__svcModuleLexer), 'undefined', `${fixture.name}: the module lexer in a card without gadget bundles`);
  for (const payload of fixture.emits ?? []) await tool(agent, 'svc_emit', { sessionId, channel: 'log', payload });
  return { id, frame, sessionId };
}

/** Sets the card's frame to `width` px and waits until its layout settled at that width. */
async function resize(page, card, width) {
  // Chromium pauses animation frames of iframes outside the viewport.
  await page.locator(`#${card.id}`).scrollIntoViewIfNeeded();
  await page.evaluate(({ id, px }) => { document.getElementById(id).style.width = `${px}px`; }, { id: card.id, px: width });
  await waitFor(`${card.id} to be ${width} px wide`, async () => { const inner = await card.frame.evaluate(() => window.innerWidth); return inner === width || `innerWidth ${inner}`; });
  // Two frames: ResizeObserver callbacks and React's commit run before the next paint.
  await card.frame.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
}

/** Switches the host's theme for one card and waits until the card follows it. */
async function setMode(page, card, mode) {
  await page.evaluate(({ id, theme }) => window.svcHost.changeHostContext(id, { theme }), { id: card.id, theme: mode });
  await waitFor(`${card.id} to turn ${mode}`, async () => (await card.frame.evaluate(() => document.documentElement.dataset.svcMode)) === mode);
}

async function shot(page, card, fixture, width) {
  await page.locator(`#${card.id}`).screenshot({ path: path.join(ARTIFACTS, `${fixture.name}-${width}.png`) });
}

/** Horizontal overflow inside the card: the document wider than its frame. */
const overflow = (frame) => frame.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
const cardText = (frame) => frame.evaluate(() => document.body.innerText);

/** The computed value `cssValue` resolves to inside the card (a theme variable, say). */
const resolvedColor = (frame, cssValue) =>
  frame.evaluate((value) => {
    const probe = document.createElement('span');
    probe.style.backgroundColor = value;
    document.body.append(probe);
    const color = getComputedStyle(probe).backgroundColor;
    probe.remove();
    return color;
  }, cssValue);

/** axe-core's serious and critical violations inside the card (axe is injected over CDP, which a
 * strict card policy does not see). */
async function axeFindings(frame, axeSource) {
  await frame.evaluate(`${axeSource}\n;true`);
  const results = await frame.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id} (${violation.impact}): ${violation.nodes.slice(0, 3).map((node) => node.target.join(' ')).join('; ')}`);
}

/** Every control of the card, in DOM order, with a stable label for the messages. */
const controls = (frame) =>
  frame.$$eval('button:not([disabled]), input:not([disabled]), select, textarea, a[href], summary', (elements) =>
    elements
      .filter((element) => element.checkVisibility())
      // Tab enters a radio group once: at its checked radio, else at its first.
      .filter((element) => {
        if (element.type !== 'radio') return true;
        const group = [...document.querySelectorAll('input[type=radio]')].filter((radio) => radio.name === element.name);
        return element === (group.find((radio) => radio.checked) ?? group[0]);
      })
      // A probe number names each control; its start tag names it in messages.
      .map((element, index) => {
        element.dataset.tabProbe = String(index);
        return `${index}: ${element.outerHTML.slice(0, 70)}`;
      }),
  );

/** Tabs through the card from its start: which controls took focus, and whether each showed a
 * focus ring (a 2 px or wider outline). */
async function tabThrough(page, card, count) {
  // Start before the card's first control: a throwaway focusable at the top of the body.
  await card.frame.evaluate(() => {
    const start = document.createElement('span');
    start.tabIndex = 0;
    start.dataset.tabStart = 'true';
    document.body.prepend(start);
    start.focus();
  });
  const seen = [];
  // Date and time inputs take one Tab per segment, so allow a few per control; stop once focus
  // has left the card.
  for (let index = 0; index < count * 4 + 4; index += 1) {
    await page.keyboard.press('Tab');
    const focused = await card.frame.evaluate(() => {
      const element = document.activeElement;
      if (!element || element === document.body) return null;
      const style = getComputedStyle(element);
      return { probe: element.dataset.tabProbe ?? null, html: element.outerHTML.slice(0, 70), ring: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2 };
    });
    if (focused) seen.push(focused);
    else if (seen.length > 0) break;
  }
  await card.frame.evaluate(() => document.querySelector('[data-tab-start]')?.remove());
  return seen;
}

// ---------- the gallery ----------

async function run(base) {
  await mkdir(ARTIFACTS, { recursive: true });
  step('agent connects over MCP');
  const agent = await connectAgent(base);
  const host = await startHostServer();
  const userDataDir = await mkdtemp(path.join(tmpdir(), 'svc-gallery-'));
  let context;
  try {
    step('launch Chromium');
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 900, height: 1000 },
      locale: 'en-US',
      timezoneId: 'UTC',
    });
    const page = context.pages()[0] ?? (await context.newPage());
    await page.exposeFunction('svcForwardToolCall', async () => ({ isError: true, content: [{ type: 'text', text: 'no tools in the gallery' }] }));
    page.on('pageerror', (error) => diagnostics.push(`pageerror: ${error.message}`));
    page.on('console', (message) => message.type() === 'error' && diagnostics.push(`console.error: ${message.text()}`));
    await page.goto(`${host.origin}/host.html`);
    await page.waitForFunction(() => document.documentElement.dataset.ready === 'true');

    const axeSource = await readFile(path.join(HERE, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
    const cards = new Map();
    for (const fixture of FIXTURES) {
      step(`${fixture.name}: rendered at ${WIDE} px and ${NARROW} px without horizontal overflow`);
      const card = await mountFixture(page, agent, fixture);
      cards.set(fixture.name, { card, fixture });
      await waitFor(`${fixture.name}: its title`, async () => (await cardText(card.frame)).includes(fixture.props.title));
      for (const width of [WIDE, NARROW]) {
        await resize(page, card, width);
        same(await overflow(card.frame), 0, `${fixture.name} at ${width} px: pixels of horizontal overflow`);
        await shot(page, card, fixture, width);
      }
      same(await axeFindings(card.frame, axeSource), [], `${fixture.name} at ${NARROW} px: axe-core serious or critical violations`);
      await resize(page, card, WIDE);
      same(await axeFindings(card.frame, axeSource), [], `${fixture.name} at ${WIDE} px: axe-core serious or critical violations`);
      await setMode(page, card, 'dark');
      same(await overflow(card.frame), 0, `${fixture.name} at ${WIDE} px, dark: pixels of horizontal overflow`);
      same(await axeFindings(card.frame, axeSource), [], `${fixture.name} at ${WIDE} px, dark: axe-core serious or critical violations`);
      await page.locator(`#${card.id}`).screenshot({ path: path.join(ARTIFACTS, `${fixture.name}-${WIDE}-dark.png`) });
      await setMode(page, card, 'light');
    }

    step('every card: each control reachable by Tab, with a visible focus ring');
    for (const [name, { card }] of cards) {
      await resize(page, card, WIDE);
      const wanted = await controls(card.frame);
      const seen = await tabThrough(page, card, wanted.length);
      const reached = new Set(seen.map((focused) => focused.probe));
      same(wanted.filter((control) => !reached.has(control.split(':')[0])), [], `${name}: controls Tab never reached (focus went: ${JSON.stringify(seen.map((focused) => focused.html.slice(0, 40)))})`);
      same(seen.filter((focused) => !focused.ring).map((focused) => focused.html), [], `${name}: focused controls without a visible focus ring`);
    }

    step('orders-table: every column readable at 720 px, a stacked list at 380 px');
    {
      const { card } = cards.get('orders-table');
      await resize(page, card, WIDE);
      await waitFor('the table layout', async () => (await card.frame.locator('[data-layout="table"] table').count()) === 1);
      const headers = await card.frame.$$eval('th', (cells) => cells.map((cell) => {
        const box = cell.getBoundingClientRect();
        return { text: cell.textContent, clipped: cell.scrollWidth > cell.clientWidth + 1, inside: box.right <= document.documentElement.clientWidth + 0.5 };
      }));
      same(headers.map((h) => h.text), ['Order ID', 'Customer', 'Placed on', 'Status', 'Items', 'Total', 'Currency', 'Open order'], 'column headers in declared order, then the row action');
      same(headers.filter((h) => h.clipped || !h.inside).map((h) => h.text), [], 'columns clipped or outside the card at 720 px');
      same(await card.frame.locator('tbody tr').count(), 20, 'table rows');
      const totalAlign = await card.frame.$eval('tbody tr td:nth-child(6)', (cell) => [getComputedStyle(cell).textAlign, getComputedStyle(cell).fontVariantNumeric]);
      same(totalAlign, ['right', 'tabular-nums'], 'the total column: right-aligned tabular numbers');
      await resize(page, card, NARROW);
      await waitFor('the stacked layout', async () => (await card.frame.locator('[data-layout="stacked"]').count()) === 1);
      same(await card.frame.locator('table').count(), 0, 'tables at 380 px');
      same(await card.frame.locator('[data-layout="stacked"] li').count(), 20, 'stacked rows');
      const firstRow = await card.frame.locator('[data-layout="stacked"] li').first().innerText();
      for (const label of ['Order ID', 'Customer', 'Placed on', 'Status', 'Items', 'Total', 'Currency']) {
        check(firstRow.includes(label), `the stacked row shows ${label}: ${firstRow}`);
      }
      check(firstRow.includes('$120.00'), `the stacked row shows the total as money: ${firstRow}`);
      await resize(page, card, WIDE);
      await waitFor('the table layout again', async () => (await card.frame.locator('[data-layout="table"] table').count()) === 1);
      same(await card.frame.locator('form[data-intent="open_order"]').count(), 0, 'forms asking for an order id');
      await card.frame.locator('tbody tr').nth(5).locator('button[data-intent="open_order"]').click();
      const events = await consume(agent, card.sessionId, 10);
      same(events.map((e) => [e.intent, e.actionData]), [['open_order', { order_id: 'SO-1045' }]], 'the row action of row 6');
    }

    step('approval and weekly-metrics: money and percentages formatted for people, a series charted');
    {
      const approval = await cardText(cards.get('approval').card.frame);
      for (const shown of ['$4,312.50', '$1,299.50', 'SKU', 'Three designers start in December.\nTheir current machines are five years old.']) {
        check(approval.includes(shown), `approval shows ${JSON.stringify(shown)}: ${approval}`);
      }
      const metrics = await cardText(cards.get('weekly-metrics').card.frame);
      for (const shown of ['$18,240.75', '1.2%', '-1.8%', '312']) {
        check(metrics.includes(shown), `weekly-metrics shows ${shown}: ${metrics}`);
      }
      const chart = await cards.get('weekly-metrics').card.frame.$eval('svg[role="img"]', (svg) => [svg.getAttribute('aria-label'), svg.querySelectorAll('circle').length, svg.querySelectorAll('polyline').length]);
      same(chart, ['Revenue USD: 11/16/2026: 2,410.5, 11/17/2026: 2,804, 11/18/2026: 3,120.25', 3, 1], 'the weekly revenue chart over dates (label, points, line)');
      const invoice = await cardText(cards.get('invoice').card.frame);
      for (const shown of ['€3,748.50', '€598.50', '€150.00']) check(invoice.includes(shown), `invoice shows ${shown}: ${invoice}`);
      const agenda = await cardText(cards.get('agenda').card.frame);
      check(agenda.includes('09:30') && !agenda.includes('09:30:00Z'), `agenda shows times as people read them: ${agenda}`);
    }

    step('approval: reject is styled as danger, approve as primary');
    {
      const { frame } = cards.get('approval').card;
      const danger = await resolvedColor(frame, 'var(--svc-color-danger)');
      const accent = await resolvedColor(frame, 'var(--svc-color-accent)');
      check(danger !== accent, `the theme's danger and accent colours differ (${danger})`);
      same(await frame.$eval('button[data-intent="reject"]', (b) => getComputedStyle(b).backgroundColor), danger, 'reject button background');
      same(await frame.$eval('button[data-intent="approve"]', (b) => getComputedStyle(b).backgroundColor), accent, 'approve button background');
    }

    step('approval: a double click sends one event, and the card says it was sent');
    {
      const { card } = cards.get('approval');
      await card.frame.locator('button[data-intent="approve"]').dblclick();
      await waitFor('the sent state', async () => (await cardText(card.frame)).includes('Sent: Approve'));
      check(await card.frame.locator('button[data-intent="approve"]').isDisabled(), 'the approve button is disabled once sent');
      const events = await consume(agent, card.sessionId, 10);
      same(events.map((e) => e.intent), ['approve'], 'events after a double click');
      same(await consume(agent, card.sessionId, 2), [], 'events after the first drain (no second send)');
    }

    step('booking-form: 09:30 typed into a time field is accepted by the server');
    {
      const { card } = cards.get('booking-form');
      const form = card.frame.locator('form[data-intent="book"]');
      await form.locator('input[type="date"]').fill('2026-12-24');
      await form.locator('input[type="time"]').fill('09:30');
      await form.locator('label', { hasText: 'Terrace' }).click();
      await form.getByRole('button', { name: 'Add row' }).click();
      await form.locator('[data-row="0"] input[type="text"]').fill('Ada');
      await form.locator('[data-row="0"] input[type="checkbox"]').check();
      await form.locator('button[data-intent="book"]').click();
      const events = await consume(agent, card.sessionId, 10);
      same(
        events.map((e) => [e.intent, e.actionData]),
        [['book', { date: '2026-12-24', time: '09:30:00Z', seating: 'terrace', guests: [{ name: 'Ada', vegetarian: true }] }]],
        'the booking the server accepted',
      );
      await waitFor('the sent state naming what was sent', async () => (await cardText(card.frame)).includes('time: 09:30:00Z'));
      same(await card.frame.locator('textarea').count(), 0, 'raw-JSON boxes in the booking form');
      same(await card.frame.$eval('button[data-intent="cancel"]', (b) => b.dataset.tone), 'danger', 'cancel tone');
    }

    step('checkout-steps: the stepper shows step 1 of 3 and moves when the agent answers Next');
    {
      const { card, fixture } = cards.get('checkout-steps');
      const current = () => card.frame.$eval('[data-stepper]', (nav) => [nav.querySelector('span').textContent, nav.querySelector('[aria-current="step"]')?.textContent ?? null]);
      same(await current(), ['Step 1 of 3', 'Cart'], 'the stepper at first');
      await card.frame.locator('button[data-intent="next"]').click();
      same((await consume(agent, card.sessionId, 10)).map((e) => e.intent), ['next'], 'the Next click');
      await tool(agent, 'svc_update', { sessionId: card.sessionId, kind: 'replace', props: { ...fixture.props, step: 2 } });
      await waitFor('the stepper to move to step 2', async () => JSON.stringify(await current()) === JSON.stringify(['Step 2 of 3', 'Shipping']));
      same(await card.frame.$eval('button[data-intent="back"]', (b) => b.dataset.tone), 'secondary', 'Back tone');
      // Sent for step 1; the repaint to step 2 makes Next live again.
      await card.frame.locator('button[data-intent="next"]').click();
      same((await consume(agent, card.sessionId, 10)).map((e) => e.intent), ['next'], 'the Next click on step 2');
    }

    step('kpi-dashboard: a sparkline in each tile with a history, a line chart for a history of its own');
    {
      const { frame } = cards.get('kpi-dashboard').card;
      const charts = await frame.$$eval('svg[role="img"]', (svgs) => svgs.map((svg) => svg.getAttribute('aria-label')));
      same(
        charts,
        [
          'Requests trend: 160,000, 171,000, 182,500, 179,000, 190,200, 198,000, 203,300',
          'Error rate trend: 0.6%, 0.5%, 0.5%, 0.5%, 0.4%, 0.4%, 0.4%',
          'Latency history: 1: 240, 2: 231, 3: 210, 4: 205, 5: 198, 6: 190, 7: 182',
        ],
        'the charts and the points they name',
      );
      const text = await cardText(frame);
      for (const shown of ['1,284,000', '0.4%', '182 ms']) check(text.includes(shown), `kpi-dashboard shows ${shown}: ${text}`);
      check(!text.includes('Requests trend'), `a tile's history has no block of its own: ${text}`);
    }

    step('incident: two buttons at the bottom, the others behind More actions');
    {
      const { frame } = cards.get('incident').card;
      const bar = await frame.$$eval('main > div:last-of-type button[data-intent]', (buttons) => buttons.map((b) => [b.dataset.intent, b.dataset.tone]));
      same(bar.slice(0, 2), [['acknowledge', 'primary'], ['resolve', 'secondary']], 'the bottom bar');
      same(await frame.locator('details[data-more-actions] button[data-intent]').evaluateAll((buttons) => buttons.map((b) => b.dataset.intent)), ['escalate', 'page_oncall'], 'behind More actions');
      check(!(await frame.locator('button[data-intent="escalate"]').isVisible()), 'escalate is hidden until More actions opens');
      await frame.locator('details[data-more-actions] summary').click();
      await frame.locator('button[data-intent="escalate"]').click();
      same((await consume(agent, cards.get('incident').card.sessionId, 10)).map((e) => e.intent), ['escalate'], 'the action behind More actions');
    }

    step('signup-form: the field the server refuses shows its error inline; fixed, it is sent, sending then sent');
    {
      const { card } = cards.get('signup-form');
      const form = card.frame.locator('form[data-intent="create_workspace"]');
      // Record every state the button and the status line pass through.
      await card.frame.evaluate(() => {
        window.seen = [];
        const note = () => {
          const button = document.querySelector('button[data-intent="create_workspace"]');
          const status = [...document.querySelectorAll('[role="status"], [data-refused]')].map((node) => node.textContent).join(' | ');
          window.seen.push(`${button?.disabled ? 'disabled' : 'enabled'}/${button?.getAttribute('aria-busy')}/${status}`);
        };
        new MutationObserver(note).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
      });
      await form.getByLabel('Handle').fill('My Team!');
      await form.getByLabel('Email').fill('ada@example.com');
      await form.getByLabel('Region').selectOption({ label: 'eu-west' });
      await form.locator('button[data-intent="create_workspace"]').click();
      await waitFor('the inline error on Handle', async () => (await card.frame.locator('[data-field-error="handle"]').count()) === 1);
      const error = await card.frame.locator('[data-field-error="handle"]').innerText();
      check(error.includes('^[a-z0-9-]{3,20}$'), `the error names the rule: ${error}`);
      same(await form.getByLabel('Handle').getAttribute('aria-invalid'), 'true', 'Handle marked invalid');
      same(await form.getByLabel('Email').getAttribute('aria-invalid'), 'false', 'Email not marked invalid');
      check((await cardText(card.frame)).includes('Not sent: Create workspace'), 'the card says nothing was sent');
      check(!(await form.locator('button[data-intent="create_workspace"]').isDisabled()), 'the button is live again after a refusal');
      same(await consume(agent, card.sessionId, 2), [], 'events after the refused submission');
      await form.getByLabel('Handle').fill('my-team');
      await form.locator('button[data-intent="create_workspace"]').click();
      await waitFor('the sent state', async () => (await cardText(card.frame)).includes('Sent: Create workspace — handle: my-team'));
      same(await card.frame.locator('[data-field-error]').count(), 0, 'inline errors once sent');
      const events = await consume(agent, card.sessionId, 10);
      same(events.map((e) => [e.intent, e.actionData]), [['create_workspace', { handle: 'my-team', email: 'ada@example.com', region: 'eu-west', seats: 5, newsletter: false }]], 'the workspace the server accepted');
      const seen = await card.frame.evaluate(() => window.seen);
      check(seen.some((state) => state.startsWith('disabled/true/Sending: Create workspace')), `a sending state was shown: ${JSON.stringify(seen)}`);
    }

    step('team-roster: a row action pages the person of its row; event-rsvp: operable by keyboard');
    {
      const roster = cards.get('team-roster').card;
      await roster.frame.locator('tbody tr').nth(1).locator('button[data-intent="page_person"]').click();
      same((await consume(agent, roster.sessionId, 10)).map((e) => [e.intent, e.actionData]), [['page_person', { email: 'alan@example.com' }]], 'the row action of row 2');
      const rsvp = cards.get('event-rsvp').card;
      await rsvp.frame.locator('button[data-intent="accept"]').focus();
      await page.keyboard.press('Enter');
      same((await consume(agent, rsvp.sessionId, 10)).map((e) => e.intent), ['accept'], 'Enter on the focused Accept');
      const empty = await cardText(cards.get('empty-state').card.frame);
      check(empty.includes('No rows yet.') && empty.includes('None'), `empty lists say so: ${empty}`);
    }

    step('ticket: long tokens wrap and line breaks are kept');
    {
      const text = await cardText(cards.get('ticket').card.frame);
      check(text.includes('Steps:\n1. Open a workspace'), `the description keeps its line breaks: ${text}`);
    }
    console.log(`gallery: ${FIXTURES.length} fixtures at ${WIDE} px and ${NARROW} px; screenshots in ${ARTIFACTS}`);
  } catch (error) {
    const page = context?.pages()[0];
    if (page) await page.screenshot({ path: path.join(ARTIFACTS, 'failure.png'), fullPage: true }).catch(() => {});
    throw error;
  } finally {
    await context?.close().catch(() => {});
    await host.close();
    await rm(userDataDir, { recursive: true, force: true });
    await agent.close().catch(() => {});
  }
}

/** The committed gallery page: one 720 px shot per fixture beside its contract and props. */
async function writeDocs(dir) {
  await mkdir(dir, { recursive: true });
  const sections = ['# Gallery of the built-in generator', '', 'Each card as the built-in generator draws it at 720 px (light theme), beside the contract and', 'props it was rendered from. Regenerate with `bash tests/browser/gallery-docs.sh`; what the', 'generator reads from a contract: `docs/builtin-generator.md`.', ''];
  for (const fixture of FIXTURES) {
    await copyFile(path.join(ARTIFACTS, `${fixture.name}-${WIDE}.png`), path.join(dir, `${fixture.name}.png`));
    sections.push(`## ${fixture.name}`, '', `![${fixture.name} at ${WIDE} px](${fixture.name}.png)`, '', '<details><summary>contract and props</summary>', '');
    sections.push('```json', JSON.stringify({ intent: fixture.intent, contract: fixture.contract, props: fixture.props }, null, 2), '```', '', '</details>', '');
  }
  await writeFile(path.join(dir, 'README.md'), sections.join('\n'));
}

const [base, flag, docsDir] = process.argv.slice(2);
if (!base || (flag !== undefined && (flag !== '--docs' || !docsDir))) {
  console.error('usage: node gallery.mjs <base-url> [--docs DIR]');
  process.exit(2);
}
try {
  await run(base.replace(/\/+$/, ''));
  if (docsDir) await writeDocs(path.resolve(docsDir));
  console.log('gallery: all steps passed');
} catch (error) {
  console.error(`gallery FAILED at step "${currentStep}": ${error instanceof StepFailure ? error.message : error.stack ?? error}`);
  if (diagnostics.length > 0) console.error(`browser console:\n  ${diagnostics.slice(-40).join('\n  ')}`);
  process.exit(1);
}
