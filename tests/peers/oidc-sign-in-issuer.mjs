#!/usr/bin/env node
// A real OpenID provider on loopback for the hosted sign-in tests
// (tests/tests/blackbox/hosted_oidc_sign_in.rs): npm `oidc-provider` (a certified implementation)
// with one confidential client, svc, allowed the authorization code flow back to svc's callback.
//
//   node tests/peers/oidc-sign-in-issuer.mjs <svc callback URL>
//
// Prints `oidc-sign-in-issuer: listening <issuer URL> <client_id> <client_secret>` once it serves.
// The person signs in without a form: `POST /_test/next-login` with a JSON body
// `{ "sub", "email", "email_verified" }` (or `{ "deny": true }`) names who the next interaction
// signs in (or that the person declines); the interaction then finishes at once, consent included.

import http from 'node:http';
import { randomBytes } from 'node:crypto';
import Provider from 'oidc-provider';

const redirectUri = process.argv[2];
if (!redirectUri) {
  console.error('usage: node oidc-sign-in-issuer.mjs <svc callback URL>');
  process.exit(2);
}
const CLIENT_ID = 'svc-sign-in';
const CLIENT_SECRET = randomBytes(24).toString('hex');

let next = null;
const people = new Map();

const server = http.createServer();
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        redirect_uris: [redirectUri],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    cookies: { keys: [randomBytes(16).toString('hex')] },
    // The email claims go into the ID token itself, where svc reads them.
    conformIdTokenClaims: false,
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    findAccount: (_ctx, sub) => {
      const person = people.get(sub);
      if (!person) return undefined;
      return { accountId: sub, claims: () => ({ sub, email: person.email, email_verified: person.email_verified }) };
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    features: { devInteractions: { enabled: false } },
    pkce: { required: () => true },
  });

  const interaction = async (req, res) => {
    const details = await provider.interactionDetails(req, res);
    if (!next) {
      res.writeHead(409, { 'content-type': 'text/plain' });
      res.end('no login queued: POST /_test/next-login first');
      return;
    }
    if (next.deny) {
      next = null;
      await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'the person declined' });
      return;
    }
    if (details.prompt.name === 'login') {
      people.set(next.sub, next);
      await provider.interactionFinished(req, res, { login: { accountId: next.sub } }, { mergeWithLastSubmission: false });
      return;
    }
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
    grant.addOIDCScope(details.params.scope);
    const grantId = await grant.save();
    next = null;
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  };

  const callback = provider.callback();
  server.on('request', (req, res) => {
    if (req.method === 'POST' && req.url === '/_test/next-login') {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        next = JSON.parse(body);
        res.writeHead(204);
        res.end();
      });
      return;
    }
    if (req.url.startsWith('/interaction/')) {
      interaction(req, res).catch((e) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(String(e));
      });
      return;
    }
    callback(req, res);
  });
  console.log(`oidc-sign-in-issuer: listening ${issuer} ${CLIENT_ID} ${CLIENT_SECRET}`);
});
