#!/usr/bin/env node
// README's first hour, in a real browser: the agent (official MCP SDK client) sends README's own
// `svc_handshake` and `svc_render` through /mcp; the render's text names the playground page;
// Chromium opens that link, the page (ext-apps AppBridge, card frame under the declared policy)
// mounts the card; a click on Approve shows under "Sent by the card", and the page's
// `svc_consume` drains it. The page's own strict policy refuses nothing it needs.
//
// Usage: node tests/browser/playground.mjs <base-url>
// Env:   SVC_AGENT_BEARER (default `dev`): the agent's bearer;
//        SVC_PLAYGROUND_KEY: a strict server: the page signs in by typing this key;
//        SVC_CHROMIUM (default /usr/bin/chromium).
// Exits non-zero with a message naming the failed step; a screenshot goes to ./artifacts/.

import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CHROMIUM, CHROMIUM_ARGS, StepFailure, check, same, waitFor } from './steps.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ARTIFACTS = path.join(HERE, 'artifacts');
const README = path.join(HERE, '..', '..', 'README.md');

let currentStep = 'start';
function step(name) {
  currentStep = name;
  console.log(`step: ${name}`);
}

/** README's first hour: the `svc_handshake` arguments and the props `svc_render` is given. */
async function firstHourCalls() {
  const readme = await readFile(README, 'utf8');
  const hour = readme.slice(readme.indexOf('## Your first hour'));
  const block = /Call `svc_handshake`:\s*```json\n([\s\S]*?)```/.exec(hour);
  check(block, 'README: no ```json block after "Call `svc_handshake`:" in "Your first hour"');
  const props = /`svc_render` with the returned `handshakeId` and `(\{[^`]*\})`/.exec(hour);
  check(props, 'README: no svc_render props in "Your first hour"');
  return { handshake: JSON.parse(block[1]), props: JSON.parse(props[1]) };
}

async function run(base) {
  step('the agent sends README\'s svc_handshake and svc_render through /mcp');
  const { handshake, props } = await firstHourCalls();
  const agent = new Client({ name: 'svc-first-hour', version: '1.0.0' });
  await agent.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${process.env.SVC_AGENT_BEARER ?? 'dev'}` } },
    }),
  );
  const shaken = await agent.callTool({ name: 'svc_handshake', arguments: handshake });
  check(!shaken.isError, `svc_handshake: ${JSON.stringify(shaken.structuredContent)}`);
  const rendered = await agent.callTool({
    name: 'svc_render',
    arguments: { handshakeId: shaken.structuredContent.handshakeId, props },
  });
  check(!rendered.isError, `svc_render: ${JSON.stringify(rendered.structuredContent)}`);
  const sessionId = rendered.structuredContent.sessionId;
  const text = rendered.content.find((c) => c.type === 'text')?.text ?? '';
  const link = `${base}/_svc/playground#${sessionId}`;
  check(text.includes(link), `svc_render's text names ${link}: ${text}`);

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const refused = [];
  page.on('console', (message) => {
    if (/Content.Security.Policy|Refused to/i.test(message.text())) refused.push(message.text());
  });
  page.on('pageerror', (error) => refused.push(`page error: ${error.message}`));
  try {
    step('Chromium opens the link from the render text');
    await page.goto(link);
    const key = process.env.SVC_PLAYGROUND_KEY;
    if (key) {
      step('a strict server: the page asks for a key, a wrong one is refused, the right one signs in');
      await page.waitForSelector('html[data-ready="sign-in"]');
      check(!(await page.isVisible('#workspace')), 'nothing but the sign-in before a key');
      await page.fill('#credential', 'svc_user_not-a-key');
      await page.click('#sign-in button[type="submit"]');
      await waitFor('the refusal', async () => (await page.textContent('#sign-in-error'))?.trim() !== '');
      await page.fill('#credential', key);
      await page.click('#sign-in button[type="submit"]');
    }
    await page.waitForSelector('html[data-ready="true"]');
    check(!(await page.isVisible('#sign-in')), 'no sign-in form once signed in (or on an open server)');
    step('the page lists the session and mounts its card');
    check(await page.locator(`#sessions button[data-session-id="${sessionId}"]`).count() === 1, 'the session is listed');
    await waitFor('the card mounted', async () => (await page.textContent('#card-status'))?.startsWith('Mounted'));
    const frame = await (await page.$('#card-slot iframe')).contentFrame();
    check(frame, 'no card frame');
    same(await page.getAttribute('#card-slot iframe', 'sandbox'), 'allow-scripts allow-forms', 'the frame sandbox');
    await frame.waitForSelector('html[data-svc-phase="ready"][data-svc-live="live"]');
    check((await frame.textContent('body')).includes(props.title), `the card shows ${props.title}`);

    step('a click on Approve shows under "Sent by the card"');
    const note = frame.getByLabel(/note/i);
    if (await note.count()) await note.first().fill('looks good');
    await frame.locator('button[data-intent="approve"]').click();
    await waitFor('the sent action', async () => (await page.textContent('#sent')).includes('"intent": "approve"'));

    step('svc_consume on the page drains the click');
    await page.click('#drain');
    await waitFor('the drained event', async () => (await page.textContent('#drained')).includes('"intent": "approve"'));

    step('the page\'s strict policy refused nothing');
    same(refused, [], 'policy refusals and page errors');
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, `playground${key ? '-strict' : ''}.png`), fullPage: true });
  } finally {
    await browser.close();
    await agent.close();
  }
}

const base = process.argv[2];
if (!base) {
  console.error('usage: node playground.mjs <base-url>');
  process.exit(2);
}
run(base).then(
  () => console.log('playground: ok'),
  (error) => {
    console.error(`playground: failed at step "${currentStep}": ${error instanceof StepFailure ? error.message : error.stack}`);
    process.exit(1);
  },
);
