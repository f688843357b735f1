// The TypeScript MCP SDK as an OAuth client of the sidecar, unattended:
// its own ClientCredentialsProvider, with nothing configured but the
// sidecar's MCP URL, the client's id and secret and the issuer it may send
// them to. The SDK starts without a token, reads the 401's
// WWW-Authenticate, fetches the Protected Resource Metadata and the
// authorization server's metadata, gets a token (client_credentials with
// the resource parameter) and retries. Its client credentials flow asks
// for the scope it is configured with (SDK 1.32.2 does not take the scope
// of a challenge for this grant), so a 403 insufficient_scope ends in an
// error when that scope is not enough.
//
// argv[2] is a JSON plan: {url, clientId, clientSecret, issuer, scope,
// query, add: {id, text}}. Every HTTP exchange is printed as one JSON line
// {http: {method, url, authorization, status, challenge, form}} (form: the
// token request's parameters, never a credential), then
// {search: <result>} and {add: <result>} or {addError: <message>}.
// Run with NODE_PATH holding @modelcontextprotocol/sdk.
'use strict';

const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { ClientCredentialsProvider } = require('@modelcontextprotocol/sdk/client/auth-extensions.js');

const plan = JSON.parse(process.argv[2]);
const print = (o) => process.stdout.write(JSON.stringify(o) + '\n');

// recordingFetch is fetch, printing each exchange.
async function recordingFetch(input, init) {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  const method = (init && init.method) || (input instanceof Request ? input.method : 'GET');
  const headers = new Headers((init && init.headers) || (input instanceof Request ? input.headers : undefined));
  let form;
  if (init && init.body instanceof URLSearchParams) {
    form = Object.fromEntries([...init.body.entries()].filter(([k]) => !/secret|assertion/i.test(k)));
  } else if (init && typeof init.body === 'string' && headers.get('content-type') === 'application/x-www-form-urlencoded') {
    form = Object.fromEntries([...new URLSearchParams(init.body).entries()].filter(([k]) => !/secret|assertion/i.test(k)));
  }
  const res = await fetch(input, init);
  print({ http: { method, url, authorization: headers.has('authorization'), status: res.status,
    challenge: res.headers.get('www-authenticate') || undefined, form } });
  return res;
}

async function main() {
  const provider = new ClientCredentialsProvider({ clientId: plan.clientId, clientSecret: plan.clientSecret,
    expectedIssuer: plan.issuer, scope: plan.scope });
  const transport = new StreamableHTTPClientTransport(new URL(plan.url), { authProvider: provider, fetch: recordingFetch });
  const client = new Client({ name: 'rcp-sidecar-oauth-check', version: '0' });
  await client.connect(transport);
  const search = await client.callTool({ name: 'search', arguments: { query: plan.query } });
  print({ search });
  if (plan.add) {
    try {
      const add = await client.callTool({ name: 'index_add', arguments: { documents: [plan.add] } });
      print({ add });
    } catch (e) {
      print({ addError: String(e && e.message ? e.message : e) });
    }
  }
  await client.close();
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e) + '\n');
  process.exit(1);
});
