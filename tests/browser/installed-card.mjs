#!/usr/bin/env node
// A card made of what `svc install` put into a project, in Chromium: the server was started in
// the project directory, so it compiled the installed blueprint (`.svc/installed-blueprints/...`
// through `svc.json#blueprints.include`); that blueprint imports the installed gadget, whose
// bundle the card fetches from the registry and checks against the `bundleSri` install wrote.
// Then the registry's stored bundle is tampered with: the same URL now serves other bytes, and a
// fresh browser (no cached copy) refuses them with the documented integrity error.
//
// Usage: node tests/browser/installed-card.mjs <base-url>
// Env:   SVC_PROJECT_DIR    the project install wrote into (svc.json, .svc/installed-blueprints)
//        SVC_BLUEPRINT_ID   the installed blueprint's id (`@scope/name@version`)
//        SVC_TAMPER_FILE    the registry's stored file of the gadget bundle (rewritten here)
// Run by tests/tests/blackbox/registry_end_to_end.rs; exits non-zero naming the failed step.

import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CHROMIUM, CHROMIUM_ARGS, StepFailure, check, same, waitFor } from './steps.mjs';
import { startHostServer } from './host-server.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ARTIFACTS = path.join(HERE, 'artifacts', 'installed');
const HOST_CONTEXT = { theme: 'light', displayMode: 'inline', locale: 'en-US', timeZone: 'UTC', platform: 'web' };
/** The props of the card; the installed gadget's `useSparkline` draws `values`. */
const PROPS = { title: 'Installed board', values: [1, 3, 5] };

let currentStep = 'start';
const diagnostics = [];

function step(name) {
  currentStep = name;
  console.log(`step: ${name}`);
}

function env(name) {
  const value = process.env[name];
  if (!value) throw new StepFailure(`${name} is not set (see tests/tests/blackbox/registry_end_to_end.rs)`);
  return value;
}

async function tool(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new StepFailure(`${name} answered an error result: ${JSON.stringify(result.structuredContent ?? result.content)}`);
  return result;
}

const sri = (bytes) => `sha384-${createHash('sha384').update(bytes).digest('base64')}`;
const cardText = (frame) => frame.evaluate(() => document.body.innerText);

/** A new browser context (its own HTTP cache) on the host page, the card mounted in it. */
async function mountInFreshContext(browser, host, id, resource, toolInput, toolResult) {
  const context = await browser.newContext({ viewport: { width: 720, height: 600 } });
  const page = await context.newPage();
  page.on('console', (message) => diagnostics.push(`${id} console.${message.type()}: ${message.text()}`));
  page.on('pageerror', (error) => diagnostics.push(`${id} pageerror: ${error.message}`));
  page.on('requestfailed', (request) => diagnostics.push(`${id} request failed: ${request.url()}: ${request.failure()?.errorText}`));
  await page.goto(`${host.origin}/host.html`);
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true');
  await page.evaluate((args) => window.svcHost.mount(args), {
    id,
    title: id,
    html: resource.html,
    csp: resource.csp,
    toolInput,
    toolResult,
    hostContext: HOST_CONTEXT,
  });
  const frame = await (await page.$(`#${id}`)).contentFrame();
  check(frame, `${id}: no frame`);
  return { context, page, frame };
}

async function run(base) {
  await mkdir(ARTIFACTS, { recursive: true });
  const project = env('SVC_PROJECT_DIR');
  const blueprintId = env('SVC_BLUEPRINT_ID');
  const tamperFile = env('SVC_TAMPER_FILE');
  const svcJson = JSON.parse(await readFile(path.join(project, 'svc.json'), 'utf8'));
  const gadget = svcJson.app.gadgets[0];
  const installedDir = blueprintId.replace(/@(?=[^@]*$)/, '__').replace('/', '__');
  const ui = JSON.parse(await readFile(path.join(project, '.svc', 'installed-blueprints', installedDir, 'svc.ui.json'), 'utf8'));

  step('the agent finds the installed blueprint compiled by the server');
  const agent = new Client({ name: 'svc-installed-card-test', version: '1.0.0' });
  await agent.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { Authorization: 'Bearer installed-card-test' } },
  }));
  const compiled = await tool(agent, 'svc_render_blueprint', { blueprintId });
  same(compiled.structuredContent.contentType, 'application/javascript+react', 'the compiled blueprint');
  check(compiled.structuredContent.code.includes(gadget.package), `the compiled blueprint does not import ${gadget.package}`);

  step('the agent renders a card from the installed blueprint');
  const handshake = await tool(agent, 'svc_handshake', { intent: blueprintId, blueprintDraft: { contract: ui.contract } });
  const planned = handshake.structuredContent.suggestion?.blueprintMeta ?? handshake.structuredContent.blueprintMeta;
  check(planned?.blueprintId === blueprintId, `the handshake does not reuse the installed blueprint: ${JSON.stringify(handshake.structuredContent)}`);
  const toolInput = { handshakeId: handshake.structuredContent.handshakeId, props: PROPS };
  const toolResult = await tool(agent, 'svc_render', toolInput);
  same(toolResult.structuredContent.outcome, 'rendered', 'svc_render outcome');
  const read = await agent.readResource({ uri: `ui://svc/render/${toolResult.structuredContent.sessionId}` });
  const resource = { html: read.contents[0].text, csp: read.contents[0]._meta?.ui?.csp ?? {} };
  check(
    (resource.csp.connectDomains ?? []).includes(new URL(gadget.bundleUrl).origin),
    `the card may not fetch the bundle's origin: ${JSON.stringify(resource.csp)}`,
  );

  const host = await startHostServer();
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  try {
    step('the card draws with the installed gadget, its bundle checked against bundleSri');
    const good = await mountInFreshContext(browser, host, 'card-installed', resource, toolInput, toolResult);
    // The gadget's useSparkline draws 1, 3, 5 as these bars: only its bundle's code knows them.
    await waitFor('the installed gadget to draw in the card', async () => (await cardText(good.frame)).includes('sparkline: ▂▄▆') || (await cardText(good.frame)));
    check((await cardText(good.frame)).includes(PROPS.title), 'the card shows its title');
    await good.page.screenshot({ path: path.join(ARTIFACTS, 'installed-card.png'), fullPage: true });
    await good.context.close();

    step('a tampered bundle at the same URL is refused by the browser');
    const original = await readFile(tamperFile);
    same(sri(original), gadget.bundleSri, 'the stored bundle is the installed one');
    await writeFile(tamperFile, `globalThis.svcTamperedBundleRan = true;\n${original}`);
    const served = Buffer.from(await (await fetch(gadget.bundleUrl)).arrayBuffer());
    check(sri(served) !== gadget.bundleSri, 'the registry still serves the original bytes: nothing was tampered');
    const bad = await mountInFreshContext(browser, host, 'card-tampered', resource, toolInput, toolResult);
    const refusal = `the gadget package "${gadget.package}" failed its integrity check: ${gadget.bundleUrl} has ${sri(served)}, expected ${gadget.bundleSri}`;
    await waitFor('the integrity error in the card', async () => (await cardText(bad.frame)).includes(refusal) || (await cardText(bad.frame)));
    check(!(await cardText(bad.frame)).includes('sparkline:'), 'the tampered card drew the gadget');
    same(await bad.frame.evaluate(() => globalThis.svcTamperedBundleRan ?? false), false, 'the tampered bundle ran');
    await bad.page.screenshot({ path: path.join(ARTIFACTS, 'tampered-card.png'), fullPage: true });
    await bad.context.close();
  } finally {
    await browser.close().catch(() => {});
    await host.close();
    await agent.close().catch(() => {});
  }
}

const base = process.argv[2];
if (!base) {
  console.error('usage: node installed-card.mjs <base-url>');
  process.exit(2);
}
try {
  await run(base.replace(/\/+$/, ''));
  console.log('installed-card: all steps passed');
} catch (error) {
  console.error(`installed-card FAILED at step "${currentStep}": ${error instanceof StepFailure ? error.message : error.stack ?? error}`);
  if (diagnostics.length > 0) console.error(`browser console:\n  ${diagnostics.slice(-40).join('\n  ')}`);
  process.exit(1);
}
