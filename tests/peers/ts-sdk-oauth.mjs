#!/usr/bin/env node
// A real third-party OAuth client: the official TypeScript SDK (@modelcontextprotocol/sdk, its
// `auth()` flow driven by StreamableHTTPClientTransport with an OAuthClientProvider) against an
// svc server started with `serve --oauth`.
//
//   SVC_PEER_API_KEY=svc_... node tests/peers/ts-sdk-oauth.mjs http://127.0.0.1:PORT/mcp
//   SVC_PEER_PAIR_CODE=123456 node tests/peers/ts-sdk-oauth.mjs http://127.0.0.1:PORT/mcp
//   SVC_PEER_EMAIL=a@example.org SVC_PEER_PASSWORD=... [SVC_PEER_SIGN_UP=1] node tests/peers/ts-sdk-oauth.mjs URL
//     (a hosted server: the person signs in, or signs up, with an account)
//   SVC_PEER_CONSENT=stdio node tests/peers/ts-sdk-oauth.mjs https://HOST/mcp
//
// Starting from the server URL alone, the SDK meets the 401, discovers the protected-resource
// and authorization-server metadata, registers a client and sends the "browser" to
// /oauth/authorize. This script plays the person: it loads the consent form, submits it with
// the key or the pair code, and reads the redirect (code, state, iss). The SDK then exchanges
// the code (PKCE) and the script lists tools on /mcp with the token. With SVC_PEER_CONSENT=stdio
// the caller plays the person instead: the script prints `ts-sdk-oauth: authorize <url>`, reads
// the redirect's URL from stdin, and prints `ts-sdk-oauth: token <access token>` for the caller
// to go on with (tests/tests/blackbox/hosted_deployment.rs). Exits 0 on success; on a
// failure prints `ts-sdk-oauth: FAIL: <what>` to stderr and exits 1.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';

const REDIRECT_URL = 'http://127.0.0.1:47613/callback';
const CLIENT_NAME = 'svc ts-sdk oauth peer';

class PeerFailure extends Error {}

function check(condition, message, detail) {
  if (!condition) {
    const shown = detail === undefined ? '' : `\n  got: ${JSON.stringify(detail, null, 2)}`;
    throw new PeerFailure(`${message}${shown}`);
  }
}

function log(message) {
  console.log(`ts-sdk-oauth: ${message}`);
}

/** An in-memory OAuthClientProvider: what a host application keeps between the two legs. */
class MemoryProvider {
  constructor() {
    this.savedState = randomBytes(16).toString('hex');
    this.authorizationUrl = undefined;
  }
  get redirectUrl() {
    return REDIRECT_URL;
  }
  get clientMetadata() {
    return {
      client_name: CLIENT_NAME,
      redirect_uris: [REDIRECT_URL],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: 'mcp',
    };
  }
  state() {
    return this.savedState;
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(client) {
    this.client = client;
  }
  tokens() {
    return this.savedTokens;
  }
  saveTokens(tokens) {
    this.savedTokens = tokens;
  }
  redirectToAuthorization(url) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(state) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
}

/** The hidden inputs of the consent form, as a browser would submit them. */
function hiddenInputs(html) {
  const fields = new URLSearchParams();
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    const decode = (s) =>
      s.replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
    fields.append(match[1], decode(match[2]));
  }
  return fields;
}

/** Hands the authorization URL to the caller; returns the redirect's query parameters it sends back. */
async function consentByCaller(authorizationUrl) {
  console.log(`ts-sdk-oauth: authorize ${authorizationUrl.href}`);
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    lines.close();
    const location = new URL(line.trim());
    check(location.origin + location.pathname === REDIRECT_URL, 'redirected somewhere else', location.href);
    return location.searchParams;
  }
  throw new PeerFailure('stdin closed before the redirect came');
}

/** Plays the person at the consent page; returns the redirect's query parameters. */
async function consent(authorizationUrl) {
  if (process.env.SVC_PEER_CONSENT === 'stdio') return consentByCaller(authorizationUrl);
  const page = await fetch(authorizationUrl, { redirect: 'manual' });
  const html = await page.text();
  check(page.status === 200, `GET ${authorizationUrl} did not show the consent form`, { status: page.status, html });
  check(html.includes(CLIENT_NAME), 'the consent form does not name the client', html);
  check(html.includes('127.0.0.1:47613'), 'the consent form does not name where the code goes', html);
  const form = hiddenInputs(html);
  const action = html.match(/<form method="post" action="([^"]+)">/)?.[1];
  check(action, 'the consent form has no action', html);
  let action_value = 'allow';
  if (process.env.SVC_PEER_EMAIL) {
    check(html.includes('name="email"') && html.includes('name="password"'), 'the consent form has no sign-in fields', html);
    form.append('email', process.env.SVC_PEER_EMAIL);
    form.append('password', process.env.SVC_PEER_PASSWORD ?? '');
    if (process.env.SVC_PEER_SIGN_UP === '1') {
      check(html.includes('value="signup"'), 'the consent form offers no sign-up', html);
      action_value = 'signup';
    }
    log(`consent: ${action_value === 'signup' ? 'signing up' : 'signing in'} as ${process.env.SVC_PEER_EMAIL}`);
  } else if (process.env.SVC_PEER_PAIR_CODE) {
    form.append('pair_code', process.env.SVC_PEER_PAIR_CODE);
    log('consent: submitting the pair code');
  } else {
    check(process.env.SVC_PEER_API_KEY, 'set SVC_PEER_API_KEY, SVC_PEER_PAIR_CODE or SVC_PEER_EMAIL');
    form.append('api_key', process.env.SVC_PEER_API_KEY);
    log('consent: submitting a key');
  }
  form.append('action', action_value);
  const answer = await fetch(action.replaceAll('&amp;', '&'), {
    method: 'POST',
    body: form,
    redirect: 'manual',
  });
  check(answer.status === 302, 'the consent POST did not redirect', { status: answer.status, body: await answer.text() });
  const location = new URL(answer.headers.get('location'));
  check(location.origin + location.pathname === REDIRECT_URL, 'redirected somewhere else', location.href);
  return location.searchParams;
}

async function main() {
  const url = process.argv[2];
  check(url, 'usage: node ts-sdk-oauth.mjs <http://127.0.0.1:PORT/mcp>');
  const provider = new MemoryProvider();

  // Leg 1: connect without a token; the SDK discovers, registers and "redirects".
  const first = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  const unauthenticated = new Client({ name: 'svc-peer-ts-oauth', version: '1.0.0' }, { capabilities: {} });
  try {
    await unauthenticated.connect(first);
    throw new PeerFailure('connected without a token');
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
  }
  check(provider.client?.client_id, 'the SDK did not register a client', provider.client);
  check(!provider.client.client_secret, 'registration issued a client secret', provider.client);
  check(provider.authorizationUrl, 'the SDK did not start the authorization');
  const metadata = provider.discovery?.authorizationServerMetadata;
  check(metadata?.issuer, 'the SDK kept no authorization-server metadata', provider.discovery);
  log(`registered ${provider.client.client_id}; issuer ${metadata.issuer}`);
  const request = provider.authorizationUrl.searchParams;
  check(request.get('code_challenge_method') === 'S256', 'not S256', request.toString());
  // The universal endpoint's resource is <issuer>/mcp; a per-app endpoint's, <issuer>/apps/<appId>/mcp.
  const resource = process.env.SVC_PEER_RESOURCE ?? `${metadata.issuer}/mcp`;
  check(request.get('resource') === resource, `the resource is not ${resource}`, request.toString());

  // The person approves; the server redirects with code, state and iss.
  const answer = await consent(provider.authorizationUrl);
  check(answer.get('state') === provider.savedState, 'state was not echoed', answer.toString());
  check(answer.get('iss') === metadata.issuer, 'iss is not byte-identical to the metadata issuer', answer.toString());
  const code = answer.get('code');
  check(code, 'no code in the redirect', answer.toString());

  // Leg 2: the SDK exchanges the code (PKCE verifier, resource) for the token.
  await first.finishAuth(code);
  const tokens = provider.tokens();
  check(tokens?.access_token && tokens.token_type?.toLowerCase() === 'bearer', 'no bearer token', tokens);
  check(tokens.refresh_token === undefined && tokens.expires_in === undefined, 'refresh or expiry given', tokens);
  log('token exchanged');
  if (process.env.SVC_PEER_CONSENT === 'stdio') log(`token ${tokens.access_token}`);

  const client = new Client({ name: 'svc-peer-ts-oauth', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
  try {
    const { tools } = await client.listTools();
    check(tools.some((t) => t.name === 'svc_render'), 'tools/list lacks svc_render', tools.map((t) => t.name));
    log(`tools/list with the OAuth token: ${tools.length} tools`);
  } finally {
    await client.close();
  }
  log('OK');
}

main().then(
  () => process.exit(0),
  (err) => {
    const message = err instanceof PeerFailure ? err.message : (err?.stack ?? String(err));
    console.error(`ts-sdk-oauth: FAIL: ${message}`);
    process.exit(1);
  },
);
