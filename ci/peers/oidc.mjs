// Peer check: a real OAuth/OIDC library (oauth4webapi 3.8.8, pinned in
// package.json) must accept the fake Nextcloud's discovery document and its
// RFC 9068 access tokens, and must refuse a token for another audience.
//
// Run through oidc.sh, which starts the fake on the demo fixture; or by hand:
//   FAKE_URL=http://127.0.0.1:18080 node ci/peers/oidc.mjs
// The authorization-code flow is driven by hand over HTTP (login form,
// authorize, token) for the demo client tamebi-mcp-nextcloud; the redirect
// URI need not be served, only its Location header is read.
// Prints "oidc: N passed, N failed" and exits non-zero on any failure.

import * as oauth from 'oauth4webapi';
import { assert, checks } from './checks.mjs';
import { codeFlow as runCodeFlow, login as formLogin } from './oidc-flow.mjs';

const base = process.env.FAKE_URL ?? 'http://127.0.0.1:18080';
const clientId = 'tamebi-mcp-nextcloud';
const clientSecret = 'demo-secret-mcp-nextcloud';
const redirectUri = 'http://127.0.0.1:8080/index.php/apps/tamebi/oauth/callback';
const audience = 'http://127.0.0.1:9101/mcp';
const user = 'alice';
const password = 'alice-demo-password';
const insecure = { [oauth.allowInsecureRequests]: true };

const { check, finish } = checks('oidc');

const b64url = (buffer) => buffer.toString('base64url');

let as;
let tokens;

await check('discovery is accepted by processDiscoveryResponse', async () => {
  const issuer = new URL(base);
  const response = await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...insecure });
  as = await oauth.processDiscoveryResponse(issuer, response);
  assert(as.issuer === base, `issuer ${as.issuer}`);
  assert(as.jwks_uri, 'no jwks_uri');
});

await check('authorization code flow with PKCE S256 yields tokens', async () => {
  tokens = await runCodeFlow(base, await formLogin(base, user, password), { id: clientId, secret: clientSecret }, redirectUri);
  assert(tokens.token_type === 'Bearer', `token_type ${tokens.token_type}`);
  assert(tokens.expires_in === 900, `expires_in ${tokens.expires_in}`);
  assert(typeof tokens.id_token === 'string', 'no id_token');
  assert(tokens.refresh_token === undefined, 'a refresh token was issued');
});

const bearerRequest = () =>
  new Request(`${audience}/tools`, { headers: { authorization: `Bearer ${tokens.access_token}` } });

await check('validateJwtAccessToken accepts the token for its own audience', async () => {
  const claims = await oauth.validateJwtAccessToken(as, bearerRequest(), audience, insecure);
  assert(claims.sub === user, `sub ${claims.sub}`);
  assert(claims.client_id === clientId, `client_id ${claims.client_id}`);
});

await check('validateJwtAccessToken refuses another audience', async () => {
  let refused = false;
  try {
    await oauth.validateJwtAccessToken(as, bearerRequest(), 'http://127.0.0.1:9102/mcp', insecure);
  } catch {
    refused = true;
  }
  assert(refused, 'a token for another audience was accepted');
});

await check('validateJwtAccessToken refuses a tampered token', async () => {
  const [header, payload, signature] = tokens.access_token.split('.');
  const claims = JSON.parse(Buffer.from(payload, 'base64url'));
  claims.sub = 'bob';
  const forged = [header, b64url(Buffer.from(JSON.stringify(claims))), signature].join('.');
  const request = new Request(`${audience}/tools`, { headers: { authorization: `Bearer ${forged}` } });
  let refused = false;
  try {
    await oauth.validateJwtAccessToken(as, request, audience, insecure);
  } catch {
    refused = true;
  }
  assert(refused, 'a forged token was accepted');
});

finish();
