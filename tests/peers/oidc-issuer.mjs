#!/usr/bin/env node
// A real OpenID provider on loopback for tests/tests/blackbox/hosted_deployment.rs: npm `oidc-provider`
// (a certified implementation) with one confidential client allowed the client-credentials
// grant, whose access tokens are ES256 JWTs with audience = the app id given.
//
//   node tests/peers/oidc-issuer.mjs <appId>
//
// Prints `oidc-issuer: listening <issuer URL> <client_id> <client_secret>` once it serves
// discovery, the JWKS and POST /token, then runs until killed.

import http from 'node:http';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import Provider from 'oidc-provider';

const appId = process.argv[2];
if (!appId) {
  console.error('usage: node oidc-issuer.mjs <appId>');
  process.exit(2);
}
const CLIENT_ID = 'svc-hosted-e2e';
const CLIENT_SECRET = randomBytes(24).toString('hex');
// The resource indicator the tokens are for; their `aud` is the app id itself.
const RESOURCE = `urn:svc:apps:${appId}`;

const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: 'e2e-es256', alg: 'ES256', use: 'sig' };

const server = http.createServer();
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
        id_token_signed_response_alg: 'ES256',
      },
    ],
    jwks: { keys: [signingKey] },
    scopes: ['mcp'],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => {
          if (resource !== RESOURCE) throw new Provider.errors.InvalidTarget();
          return { scope: 'mcp', audience: appId, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } };
        },
      },
    },
  });
  server.on('request', provider.callback());
  console.log(`oidc-issuer: listening ${issuer} ${CLIENT_ID} ${CLIENT_SECRET}`);
});
