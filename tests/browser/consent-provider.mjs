// The OAuth consent page's "Sign in with <provider> and allow" button in Debian's Chromium, run by
// tests/tests/blackbox/hosted_oidc_sign_in.rs: `node consent-provider.mjs <authorize URL>
// <provider origin>` opens the consent page, clicks the button and waits for the browser to be
// sent to the provider. The server begins this sign-in only for a form posted from its own origin
// (what a browser's `Origin` and `Sec-Fetch-Site` say), so this is the check that the page's own
// form passes it in a real browser, whatever its referrer policy makes the browser send.

import { chromium } from 'playwright-core';

import { CHROMIUM, CHROMIUM_ARGS, WAIT_MS, check } from './steps.mjs';

const [authorizeUrl, providerOrigin] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
try {
  const page = await browser.newPage();
  const posts = [];
  page.on('response', (response) => {
    if (response.request().method() === 'POST') posts.push(`${response.status()} ${response.url()}`);
  });
  const consent = await page.goto(authorizeUrl);
  check(consent?.status() === 200, `the consent page answered ${consent?.status()}`);
  const toProvider = page
    .waitForRequest((request) => request.url().startsWith(providerOrigin), { timeout: WAIT_MS })
    .catch(() => null);
  await page.getByRole('button', { name: /^Sign in with / }).click();
  const request = await toProvider;
  check(request !== null, `the browser never reached the provider; the form's answers: ${posts.join(', ') || 'none'}`);
  console.log(`sent to the provider: ${request.url().split('?')[0]} (form answers: ${posts.join(', ')})`);
} finally {
  await browser.close();
}
