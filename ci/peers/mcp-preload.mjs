// Loaded with `node --import` by the MCP conformance suite, which has no
// option for headers: every request to the MCP server gets the user's two
// tokens (TAMEBI_MCP_TOKEN, TAMEBI_NEXTCLOUD_TOKEN), as the orchestrator
// would send them.

const target = process.env.TAMEBI_MCP_URL;
const mcpToken = process.env.TAMEBI_MCP_TOKEN;
const nextcloudToken = process.env.TAMEBI_NEXTCLOUD_TOKEN;
const originalFetch = globalThis.fetch;

globalThis.fetch = (input, init = {}) => {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  if (target && url.startsWith(new URL(target).origin)) {
    const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
    headers.set('authorization', `Bearer ${mcpToken}`);
    headers.set('x-tamebi-nextcloud-token', nextcloudToken);
    init = { ...init, headers };
  }
  return originalFetch(input, init);
};
