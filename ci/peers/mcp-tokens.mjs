// Prints a user's two access tokens as JSON — {"mcp": ..., "nextcloud": ...}
// — obtained from the fake Nextcloud by the real authorization-code flow:
// one minted for mcp-nextcloud's audience, one for Nextcloud's own.
//   FAKE_URL=http://127.0.0.1:18080 node ci/peers/mcp-tokens.mjs alice alice-demo-password

import { codeFlow, demo, login } from './oidc-flow.mjs';

const base = process.env.FAKE_URL ?? 'http://127.0.0.1:18080';
const [user = 'alice', password = 'alice-demo-password'] = process.argv.slice(2);
const cookies = await login(base, user, password);
const mcp = await codeFlow(base, cookies, demo.clients.mcpNextcloud);
const nextcloud = await codeFlow(base, cookies, demo.clients.nextcloud);
console.log(JSON.stringify({ mcp: mcp.access_token, nextcloud: nextcloud.access_token }));
