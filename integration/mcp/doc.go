// Package mcp checks the sidecar's MCP server with clients independent of
// its own Go SDK: the reference Python SDK (PyPI "mcp" 2.x) over stdio and
// Streamable HTTP, against the memory engine and a real Elasticsearch,
// a LangGraph agent through langchain-mcp-adapters (examples/langgraph)
// against the demo, and the TypeScript SDK client (ts/check_client.cjs,
// dependencies pinned by ts/package-lock.json) against the demo over
// stdio. integration/mcp/setup.sh installs the clients; the tests need
// RCP_MCP_PYTHON, RCP_LANGGRAPH_PYTHON, RCP_MCP_NODE and
// RCP_MCP_NODE_MODULES (and RCP_ES_URL for the Elasticsearch case), and
// fail instead of skipping under RCP_REQUIRE_ENGINES.
package mcp
