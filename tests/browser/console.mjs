// The operator console in Debian's Chromium against a real server, run by tests/tests/blackbox/browser.rs:
// `node console.mjs <base> <key> <coupon code>` walks a self-hosted server (SQLite);
// `node console.mjs <base> <email> <coupon code> hosted <password>` walks a hosted server
// (PostgreSQL): signs in with the account's email and password (a wrong password first), a
// provider key set and removed (only its last four shown), the account's spend in the chart, its
// generated blueprint previewed, a coupon changing the balance and the ledger.
//
// It signs in (a wrong key first: the error shows next to the field), checks the session cookie
// is HttpOnly and unreadable from script, then walks every screen: creates and renames an app and
// counts its system prompt; issues a key (the one-time reveal), sees it work on /mcp, revokes it
// and sees /mcp refuse it; creates an org, invites (again: reused) and sees the invite's status
// listed, revokes it; redeems a malformed then a real
// coupon; shows the blueprints' empty state, registers a blueprint and sees it mounted in its
// sandboxed preview frame, edits its variance, registers 20 more over /ops and pages to the last
// with "Load more blueprints"; hosted-only screens are absent. Each screen is
// checked by axe-core (no serious or critical violation) at 1024 px light, 380 px (no horizontal
// overflow) and dark; the nav works from the keyboard; no CSP violation is reported.
// Screenshots: ./artifacts/console/<screen>-<variant>.png (gitignored, kept by CI), and readme.png
// (the reveal at 720 px, copied to docs/console.png).

import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

import { CHROMIUM, CHROMIUM_ARGS, StepFailure, check, same, waitFor } from './steps.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ARTIFACTS = path.join(HERE, 'artifacts', 'console');
const WIDE = 1024;
const NARROW = 380;

const [base, key, coupon, mode, password] = process.argv.slice(2);
/** `hosted`: walk the hosted-only screens (provider keys, credits) instead. */
const hosted = mode === 'hosted';
let current = 'start';
const diagnostics = [];
const step = (name) => {
  current = name;
  console.log(`step: ${name}`);
};

async function axeFindings(page, axeSource) {
  // Injected over CDP: the console's own policy (script-src 'self') does not see it.
  await page.evaluate(`${axeSource}\n;true`);
  // The preview frames hold the blueprint's own component (the author's markup, not the
  // console's), in an opaque origin axe cannot enter: the console's page is what is checked.
  const results = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'], iframes: false }));
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join('; ')}`);
}

/** axe at 1024 px light, at 380 px (with no horizontal overflow) and in dark mode; screenshots. */
async function checkScreen(page, axeSource, screen) {
  const name = hosted ? `hosted-${screen}` : screen;
  await page.setViewportSize({ width: WIDE, height: 900 });
  await page.emulateMedia({ colorScheme: 'light' });
  same(await axeFindings(page, axeSource), [], `${name} at ${WIDE} px: axe-core serious or critical violations`);
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}-${WIDE}.png`), fullPage: true });
  await page.setViewportSize({ width: NARROW, height: 800 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check(overflow <= 0, `${name} at ${NARROW} px overflows horizontally by ${overflow} px`);
  same(await axeFindings(page, axeSource), [], `${name} at ${NARROW} px: axe-core serious or critical violations`);
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}-${NARROW}.png`), fullPage: true });
  await page.setViewportSize({ width: WIDE, height: 900 });
  await page.emulateMedia({ colorScheme: 'dark' });
  same(await axeFindings(page, axeSource), [], `${name} dark: axe-core serious or critical violations`);
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}-${WIDE}-dark.png`), fullPage: true });
  await page.emulateMedia({ colorScheme: 'light' });
}

async function mcpStatus(bearer) {
  const response = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${bearer}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  return response.status;
}

/** An /ops tool called with the bearer `key`, as an agent or script would; its result body. */
async function opsTool(name, args) {
  const response = await fetch(`${base}/ops`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const body = await response.json();
  check(response.status === 200 && body.result && !body.result.isError, `${name}: ${JSON.stringify(body)}`);
  return body.result.structuredContent;
}

async function open(page, screen) {
  await page.click(`nav a[href="#${screen}"]`);
  await shown(page, screen);
}

/**
 * Waits until the console has drawn `screen`, not only changed the URL: the hash changes at
 * once, the screen on the next render, and until then the previous screen's fields still match.
 */
async function shown(page, screen) {
  await page.waitForFunction((s) => window.location.hash === `#${s}`, screen);
  await page.locator(`nav a[href="#${screen}"][aria-current="page"]`).waitFor();
}

/** The self-hosted screens: apps, keys, orgs, coupons, blueprints. */
async function selfHostedWalk(page, axeSource) {
  step('apps: create, rename, count the system prompt');
  await page.getByLabel('New app name').fill('Console demo');
  await page.getByRole('button', { name: 'Create app' }).click();
  const card = page.locator('li.card', { has: page.getByRole('heading', { name: 'Console demo' }) });
  await card.waitFor();
  await card.getByLabel('Name').fill('Renamed demo');
  await card.getByRole('button', { name: 'Rename' }).click();
  const renamed = page.locator('li.card', { has: page.getByRole('heading', { name: 'Renamed demo' }) });
  await renamed.waitFor();
  await renamed.getByLabel('System prompt').fill('Answer in French.');
  await waitFor('the character count', async () => (await renamed.locator('.count').innerText()).startsWith('17 / 10,000'));
  await renamed.getByRole('button', { name: 'Save system prompt' }).click();
  await waitFor('the saved prompt', async () => await renamed.getByRole('button', { name: 'Save system prompt' }).isDisabled());
  await renamed.getByLabel('Name').fill('');
  await renamed.getByRole('button', { name: 'Rename' }).click();
  await waitFor('the rename error beside the field', async () => (await renamed.locator('[role=alert]').first().innerText()).includes('displayName'));
  await checkScreen(page, axeSource, 'apps');

  step('the nav works from the keyboard');
  await page.locator('nav a[href="#apps"]').focus();
  await page.keyboard.press('Tab');
  const focused = await page.evaluate(() => document.activeElement?.textContent);
  same(focused, 'Connector keys', 'Tab moves to the next screen link');
  await page.keyboard.press('Enter');
  await shown(page, 'keys');

  step('keys: issue one and see it once');
  await page.getByLabel('Name', { exact: true }).fill('browser');
  await page.getByRole('button', { name: 'Issue key' }).click();
  const reveal = page.getByLabel('Key', { exact: true });
  await reveal.waitFor();
  const plaintext = await reveal.inputValue();
  check(plaintext.startsWith('svc_user_'), `revealed ${plaintext}`);
  await page.getByRole('button', { name: 'Copy' }).click();
  await waitFor('the copy confirmation', async () => (await page.locator('.reveal [role=status]').innerText()).length > 0);
  same(await mcpStatus(plaintext), 200, 'the issued key on /mcp');
  await checkScreen(page, axeSource, 'keys-reveal');
  // The README's picture (docs/console.png is a copy): the reveal at 720 px.
  await page.setViewportSize({ width: 720, height: 620 });
  await page.screenshot({ path: path.join(ARTIFACTS, 'readme.png') });
  await page.setViewportSize({ width: WIDE, height: 900 });
  await page.getByRole('button', { name: 'I stored it' }).click();
  check((await page.locator('#revealed-key').count()) === 0, 'the key is not shown again');

  step('keys: revoke with confirmation, then /mcp refuses it');
  const keyCard = page.getByRole('listitem', { name: 'Key browser' });
  await keyCard.getByRole('button', { name: 'Revoke' }).click();
  await keyCard.getByRole('button', { name: 'Yes, revoke' }).click();
  await keyCard.locator('.badge.revoked').waitFor();
  same(await mcpStatus(plaintext), 401, 'the revoked key on /mcp');
  await checkScreen(page, axeSource, 'keys');

  step('orgs: create, invite, revoke');
  await open(page, 'orgs');
  await page.getByText('You are in no org yet').waitFor();
  await page.getByLabel('New org name').fill('Acme');
  await page.getByRole('button', { name: 'Create org' }).click();
  const org = page.locator('li.card', { has: page.getByRole('heading', { name: /Acme/ }) });
  await org.waitFor();
  await org.getByLabel('Invite by email').fill('ada@example.com');
  await org.getByLabel('Role').selectOption('admin');
  await org.getByRole('button', { name: 'Send invite' }).click();
  await org.getByText('ada@example.com as admin: pending').waitFor();
  step('orgs: inviting the same address again sends no second email');
  await org.getByLabel('Invite by email').fill('ada@example.com');
  await org.getByRole('button', { name: 'Send invite' }).click();
  await org.getByText('ada@example.com already has a pending invite').waitFor();
  await org.getByRole('button', { name: 'Revoke invite' }).click();
  await org.getByRole('button', { name: 'Yes, revoke' }).click();
  await org.getByText('ada@example.com as admin: revoked').waitFor();
  await checkScreen(page, axeSource, 'orgs');

  step('coupons: a malformed code is explained, a real one redeemed');
  await open(page, 'coupons');
  await page.getByLabel('Coupon code').fill('cpn_bad');
  await page.getByRole('button', { name: 'Redeem' }).click();
  await waitFor('the coupon error', async () => (await page.locator('#coupon-error').innerText()).includes('couponCode'));
  await page.getByLabel('Coupon code').fill(coupon);
  await page.getByRole('button', { name: 'Redeem' }).click();
  await page.getByText(`Redeemed ${coupon}`).waitFor();
  await page.getByLabel('Coupon code').fill(coupon);
  await page.getByRole('button', { name: 'Redeem' }).click();
  await waitFor('the second redemption refused', async () => (await page.locator('#coupon-error').innerText()).includes('already redeemed'));
  await checkScreen(page, axeSource, 'coupons');

  step('blueprints: the empty state says what to do');
  await open(page, 'blueprints');
  await page.getByText('No blueprints yet').waitFor();
  await checkScreen(page, axeSource, 'blueprints-empty');

  step('blueprints: a contract that is not JSON is explained beside the form');
  await page.getByText('Register a blueprint').click();
  await page.getByLabel('Contract (JSON)').fill('{ not json');
  await page.getByRole('button', { name: 'Register blueprint' }).click();
  await waitFor('the contract error', async () => (await page.locator('#register-error').innerText()).startsWith('contract: not JSON'));

  step('blueprints: register one and see it mounted in its sandboxed preview');
  await page.getByLabel('Contract (JSON)').fill(
    JSON.stringify({ propsSpec: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] } }),
  );
  await page.getByLabel('Description (optional)').fill('A title card');
  await page.getByRole('button', { name: 'Register blueprint' }).click();
  await page.getByText(/^Registered /).waitFor();
  const blueprint = page.getByRole('listitem', { name: 'Blueprint A title card' });
  await blueprint.waitFor();
  const frame = blueprint.locator('iframe.preview');
  same(await frame.getAttribute('sandbox'), 'allow-scripts', 'the preview frame is sandboxed to scripts only');
  // The default component shows its title, or 'Untitled' with the contract's fixture props ('').
  await page.frameLocator('iframe[title="Preview of A title card"]').getByRole('heading', { name: 'Untitled' }).waitFor();

  step('blueprints: edit the variance');
  await blueprint.getByText('Edit variance').click();
  await blueprint.getByLabel('New field').fill('tone');
  await blueprint.getByLabel('Its value').fill('calm');
  await blueprint.getByRole('button', { name: 'Save variance' }).click();
  await waitFor('the saved variance', async () => (await blueprint.getByLabel('tone').inputValue()) === 'calm');
  await checkScreen(page, axeSource, 'blueprints');

  step('blueprints: more than a page, and "Load more blueprints" shows the rest');
  // 20 more through /ops: 21 in all, one more than a page (the console asks for 20).
  const paged = Array.from({ length: 20 }, (_, i) => `Paged card ${String(i + 1).padStart(2, '0')}`);
  for (const context of paged) {
    await opsTool('svc_ops_register_blueprint', {
      contract: { propsSpec: { type: 'object', properties: {} } },
      componentCode: 'export default function Card() { return null; }',
      context,
    });
  }
  await open(page, 'coupons');
  await open(page, 'blueprints');
  const cards = page.locator('ul.cards > li.card');
  const more = page.getByRole('button', { name: 'Load more blueprints' });
  await more.waitFor();
  same(await cards.count(), 20, 'the first page');
  // Oldest first: the last one registered is on the next page.
  check((await page.getByRole('listitem', { name: 'Blueprint Paged card 20' }).count()) === 0, 'the newest is not on the first page');
  await more.click();
  await page.getByRole('listitem', { name: 'Blueprint Paged card 20' }).waitFor();
  same(await cards.count(), 21, 'both pages');
  await waitFor('the button gone after the last page', async () => (await more.count()) === 0);
  const titles = await cards.locator('h3').allInnerTexts();
  same(new Set(titles.map((t) => t.trim())).size, 21, 'no card shown twice');

  step('hosted-only screens are absent on a self-hosted server');
  const links = await page.locator('nav a').allInnerTexts();
  same(links, ['Apps', 'Connector keys', 'Orgs', 'Coupons', 'Blueprints'], 'the screens offered');

}

/** The hosted-only screens: set and remove a provider key; a coupon changes the balance and ledger. */
async function hostedWalk(page, axeSource) {
  step('hosted: every screen is offered');
  const links = await page.locator('nav a').allInnerTexts();
  same(links, ['Apps', 'Connector keys', 'Orgs', 'Coupons', 'Blueprints', 'Provider keys', 'Credits'], 'the screens offered');

  step('provider keys: set one, only its last four shown, then remove it');
  await open(page, 'provider-keys');
  await page.getByText('No provider key yet').waitFor();
  await page.getByLabel('Provider', { exact: true }).selectOption('anthropic');
  await page.getByLabel('API key').fill('sk-ant-test-0123456789wxyz');
  await page.getByLabel('Label (optional)').fill('team');
  await page.getByRole('button', { name: 'Set key' }).click();
  const card = page.getByRole('listitem', { name: 'anthropic key' });
  await card.getByText('••••wxyz').waitFor();
  check(!(await page.content()).includes('sk-ant-test'), 'the provider key is never shown again');
  await checkScreen(page, axeSource, 'provider-keys');
  await card.getByRole('button', { name: 'Remove' }).click();
  await card.getByRole('button', { name: 'Yes, remove' }).click();
  await page.getByText('No provider key yet').waitFor();

  step('blueprints: the account\'s generated blueprint is previewed with its fixture props');
  await open(page, 'blueprints');
  const preview = page.locator('iframe.preview').first();
  await preview.waitFor();
  const previewTitle = await preview.getAttribute('title');
  await waitFor('the generated card painted in its frame', async () =>
    (await page.frameLocator(`iframe[title="${previewTitle}"]`).locator('#svc-root').innerText()).trim().length > 0,
  );
  await checkScreen(page, axeSource, 'blueprints');

  step('credits: the cold render shows as spend in the chart');
  await open(page, 'credits');
  await page.getByText('Balance').waitFor();
  await waitFor('the spend caption', async () => (await page.locator('figure.spend figcaption').innerText()).startsWith('Spent $'));
  check((await page.locator('figure.spend svg rect.bar').count()) === 1, 'one day with spend: one bar');

  step('credits: a redeemed coupon changes the balance and the ledger');
  const before = await page.locator('.figures dd').first().innerText();
  await open(page, 'coupons');
  await page.getByLabel('Coupon code').fill(coupon);
  await page.getByRole('button', { name: 'Redeem' }).click();
  await page.getByText(`Redeemed ${coupon}`).waitFor();
  await open(page, 'credits');
  const dollars = (text) => Number(text.replace(/[$,]/g, ''));
  const expected = dollars(before) + 5;
  await waitFor(`the balance ${before} plus $5.00`, async () => dollars(await page.locator('.figures dd').first().innerText()) === expected);
  await page.getByRole('list', { name: 'Ledger' }).getByText('+$5.00').waitFor();
  await checkScreen(page, axeSource, 'credits');
}

async function run() {
  await mkdir(ARTIFACTS, { recursive: true });
  await rm(path.join(ARTIFACTS, 'failure.png'), { force: true });
  const userDataDir = await mkdtemp(path.join(tmpdir(), 'svc-console-'));
  const axeSource = await readFile(path.join(HERE, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
  step('launch Chromium');
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: WIDE, height: 900 },
    locale: 'en-US',
    timezoneId: 'UTC',
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    page.on('pageerror', (error) => diagnostics.push(`pageerror: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') diagnostics.push(`console.error: ${message.text()}`);
    });

    step('the sign-in screen');
    await page.goto(`${base}/console`);
    await page.getByLabel('Key', { exact: true }).waitFor();
    await checkScreen(page, axeSource, 'signin');

    if (hosted) {
      step('hosted: a wrong password is refused in words, then the account signs in');
      await page.getByLabel('Email').fill(key);
      await page.getByLabel('Password').fill('not the password');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await waitFor('the account error', async () => (await page.locator('#account-error').innerText()).includes('email or password is not right'));
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { name: 'Apps' }).waitFor();
    } else {
      step('a wrong key is refused in words next to the field');
      await page.getByLabel('Key', { exact: true }).fill('svc_user_wrong');
      await page.getByRole('button', { name: 'Sign in with a key' }).click();
      await waitFor('the key error', async () => (await page.locator('#key-error').innerText()).includes('unknown, revoked or expired'));


      step('signing in with a key');
      await page.getByLabel('Key', { exact: true }).fill(key);
      await page.getByRole('button', { name: 'Sign in with a key' }).click();
      await page.getByRole('heading', { name: 'Apps' }).waitFor();
    }

    step('the session cookie is HttpOnly and unreadable from script');
    const cookies = await context.cookies(`${base}/console`);
    const session = cookies.find((c) => c.name === 'svc_console');
    check(session, `no svc_console cookie among ${JSON.stringify(cookies.map((c) => c.name))}`);
    same([session.httpOnly, session.sameSite, session.path], [true, 'Lax', '/console'], 'cookie attributes');
    const visible = await page.evaluate(() => document.cookie);
    check(!visible.includes('svc_console') && !visible.includes(session.value), `document.cookie shows the session: ${visible}`);

    if (hosted) await hostedWalk(page, axeSource);
    else await selfHostedWalk(page, axeSource);

    step('signing out');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Key', { exact: true }).waitFor();
    if (hosted) await page.getByLabel('Email').waitFor();
    await page.reload();
    await page.getByLabel('Key', { exact: true }).waitFor();

    const refused = diagnostics.filter((d) => /Content Security Policy|Refused to/i.test(d));
    same(refused, [], 'CSP violations');
    const errors = diagnostics.filter((d) => d.startsWith('pageerror'));
    same(errors, [], 'page errors');
    console.log(`console: every screen walked; screenshots in ${ARTIFACTS}`);
  } catch (error) {
    const page = context.pages()[0];
    if (page) await page.screenshot({ path: path.join(ARTIFACTS, 'failure.png'), fullPage: true }).catch(() => {});
    throw error;
  } finally {
    await context.close();
  }
}

run().catch((error) => {
  const kind = error instanceof StepFailure ? 'failed' : 'error';
  console.error(`console.mjs ${kind} at step "${current}": ${error.stack ?? error}`);
  if (diagnostics.length) console.error(`diagnostics:\n${diagnostics.join('\n')}`);
  process.exit(1);
});
