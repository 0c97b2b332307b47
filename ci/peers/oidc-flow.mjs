// The authorization-code flow against the fake Nextcloud, driven by hand over
// HTTP as a browser and the Tamebi app would: log in through the form, call
// authorize with the session cookies and PKCE S256, exchange the code. Shared
// by the peer checks that need real tokens (oidc.mjs, mcp-tokens.mjs).

import { createHash, randomBytes } from 'node:crypto';
import { assert } from './checks.mjs';

export const demo = {
  redirectUri: 'http://127.0.0.1:8080/index.php/apps/tamebi/oauth/callback',
  clients: {
    mcpNextcloud: { id: 'tamebi-mcp-nextcloud', secret: 'demo-secret-mcp-nextcloud', audience: 'http://127.0.0.1:9101/mcp' },
    nextcloud: { id: 'nextcloud', secret: 'demo-secret-nextcloud', audience: 'nextcloud' },
  },
};

const b64url = (buffer) => buffer.toString('base64url');

/** Logs in through the form and returns the Cookie header value. */
export async function login(base, user, password) {
  const response = await fetch(`${base}/index.php/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ user, password }),
  });
  assert(response.status === 303, `login answered ${response.status}`);
  const cookies = response.headers.getSetCookie().map((cookie) => cookie.split(';')[0]);
  assert(cookies.length > 0, 'login set no cookies');
  return cookies.join('; ');
}

/** Runs authorize + token for one client; returns the token response body. */
export async function codeFlow(base, cookies, client, redirectUri = demo.redirectUri) {
  const verifier = b64url(randomBytes(32));
  const challenge = b64url(createHash('sha256').update(verifier).digest());
  const state = b64url(randomBytes(16));
  const authorize = new URL(`${base}/index.php/apps/oidc/authorize`);
  authorize.search = new URLSearchParams({
    response_type: 'code',
    client_id: client.id,
    redirect_uri: redirectUri,
    scope: 'openid profile email',
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  const redirect = await fetch(authorize, { redirect: 'manual', headers: { cookie: cookies } });
  assert(redirect.status === 303, `authorize answered ${redirect.status}`);
  const location = new URL(redirect.headers.get('location'));
  assert(location.searchParams.get('state') === state, 'state did not round-trip');
  const code = location.searchParams.get('code');
  assert(code, 'no code in the redirect');
  const response = await fetch(`${base}/index.php/apps/oidc/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier }),
  });
  assert(response.status === 200, `token answered ${response.status}`);
  return response.json();
}
