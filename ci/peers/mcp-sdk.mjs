// Peer check: the official TypeScript MCP client (@modelcontextprotocol/sdk,
// pinned in package.json) connects to mcp-nextcloud with a bearer, lists the
// tools and calls one. Run through mcp.sh. Prints "mcp-sdk: N passed, N failed".

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { assert, checks } from './checks.mjs';

const url = process.env.TAMEBI_MCP_URL;
const headers = {
  Authorization: `Bearer ${process.env.TAMEBI_MCP_TOKEN}`,
  'x-tamebi-nextcloud-token': process.env.TAMEBI_NEXTCLOUD_TOKEN,
};

const { check, finish } = checks('mcp-sdk');

const client = new Client({ name: 'tamebi-peer-check', version: '0.0.0' });
await check('connects with a bearer', async () => {
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
});
await check('lists the tools with annotations', async () => {
  const { tools } = await client.listTools();
  const search = tools.find((tool) => tool.name === 'files_search');
  assert(search, `files_search missing from ${tools.map((tool) => tool.name)}`);
  assert(search.annotations?.readOnlyHint === true, 'files_search is not read-only');
  assert(search.outputSchema?.type === 'object', 'no output schema');
});
await check('calls files_search as the user', async () => {
  const result = await client.callTool({ name: 'files_search', arguments: { name: 'notes' } });
  assert(!result.isError, JSON.stringify(result));
  const paths = result.structuredContent.files.map((file) => file.path);
  assert(paths.includes('Documents/notes-reunion.md'), `paths: ${paths}`);
});
await check('a failure is an isError result with a failure kind', async () => {
  const result = await client.callTool({ name: 'files_read', arguments: { path: 'Nope/missing.md' } });
  assert(result.isError === true, JSON.stringify(result));
  assert(result._meta?.['tamebi/failureKind'] === 'not_found', JSON.stringify(result._meta));
});
await check('without a bearer the server answers 401 with resource metadata', async () => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
  assert(response.status === 401, `status ${response.status}`);
  assert(/resource_metadata="/.test(response.headers.get('www-authenticate') ?? ''), 'no resource_metadata');
});
await client.close().catch(() => {});
finish();
