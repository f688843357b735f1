// Drives rcp-sidecar's MCP server over stdio or Streamable HTTP with the
// TypeScript MCP SDK client (@modelcontextprotocol/sdk), which validates
// structured content against each tool's output schema.
//
// Usage: NODE_PATH=<node_modules> node check_client.cjs PLAN_JSON
//
// PLAN_JSON: {"command": path, "args": [...]: the server over stdio, or
//   "http": the /mcp URL of a running server,
//   "query": "...",
//   "filter": {"field", "value"}: a keyword eq filter that must match,
//   "bad_field": a field that is not filterable,
//   "add": a document for index_add (id, text, meta holding filter.field =
//     filter.value), found by a filtered search for its text afterwards;
//     omitted: index_add is not called}
//
// Prints a transcript, one line per exchange; the last line of a tool
// error is the text the client received. Exits non-zero on the first
// failed expectation.
"use strict";

const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

function say(...parts) {
  process.stdout.write(parts.join(" ") + "\n");
}

function fail(msg) {
  say("FAIL:", msg);
  process.exit(1);
}

async function main() {
  const plan = JSON.parse(process.argv[2]);
  const client = new Client({ name: "rcp-sidecar-ts-check", version: "1" });
  const transport = plan.http
    ? new StreamableHTTPClientTransport(new URL(plan.http))
    : new StdioClientTransport({ command: plan.command, args: plan.args, stderr: "ignore" });
  await client.connect(transport);
  const sv = client.getServerVersion();
  say("initialize", plan.http ? "(Streamable HTTP)" : "(stdio)", "->", sv.name, sv.version);

  const { tools } = await client.listTools();
  say("tools/list ->", JSON.stringify(tools.map((t) => t.name).sort()));
  const search = tools.find((t) => t.name === "search");
  if (!search || !search.outputSchema) fail("no search tool with an output schema");

  const f = plan.filter;
  const args = { query: plan.query, k: 5, filter: { field: f.field, op: "eq", value: f.value } };
  const ok = await client.callTool({ name: "search", arguments: args });
  const hits = (ok.structuredContent && ok.structuredContent.hits) || [];
  say("tools/call search", JSON.stringify(args), "-> isError", !!ok.isError, hits.length, "hits");
  if (ok.isError) fail("filtered search failed: " + JSON.stringify(ok.content));
  if (hits.length === 0) fail("filtered search found nothing");
  for (const h of hits) {
    if (!h.meta || h.meta[f.field] !== f.value) fail(`hit ${h.id} does not match the filter: ${JSON.stringify(h.meta)}`);
  }

  const bad = { query: plan.query, filter: { field: plan.bad_field, op: "eq", value: "x" } };
  let res;
  try {
    res = await client.callTool({ name: "search", arguments: bad });
  } catch (e) {
    fail("the client refused the tool error: " + e.message);
  }
  const text = (res.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
  say("tools/call search", JSON.stringify(bad), "-> isError", !!res.isError);
  say(text);
  if (!res.isError) fail("a bad filter is not a tool error");

  if (plan.add) await addThenFind(client, plan);
  await client.close();
  say("OK");
}

// addThenFind writes plan.add with index_add, then finds it by a search
// for its text restricted by plan.filter.
async function addThenFind(client, plan) {
  const added = await client.callTool({ name: "index_add", arguments: { documents: [plan.add] } });
  say("tools/call index_add", JSON.stringify(plan.add.id), "-> isError", !!added.isError);
  if (added.isError) fail("index_add failed: " + JSON.stringify(added.content));
  const f = plan.filter;
  const args = { query: plan.add.text, k: 3, filter: { field: f.field, op: "eq", value: f.value } };
  const found = await client.callTool({ name: "search", arguments: args });
  const hits = (found.structuredContent && found.structuredContent.hits) || [];
  say("tools/call search", JSON.stringify(args), "->", JSON.stringify(hits.map((h) => h.id)));
  if (found.isError || !hits.some((h) => h.id === plan.add.id)) fail(`the document index_add wrote (${plan.add.id}) is not found`);
}

main().catch((e) => fail(e && e.stack ? e.stack : String(e)));
