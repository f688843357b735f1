// Package mcp checks the sidecar's MCP server with clients independent of
// its own Go SDK: the reference Python SDK (PyPI "mcp" 2.x) over stdio and
// Streamable HTTP, against the memory engine and a real Elasticsearch,
// a LangGraph agent through langchain-mcp-adapters (examples/langgraph)
// against the demo, and the TypeScript SDK client (ts/check_client.cjs,
// dependencies pinned by ts/package-lock.json) against the demo over
// stdio and Streamable HTTP, and the MCP Inspector CLI
// (inspector/package-lock.json), whose --strict schema-portability check
// must be clean for the tools of every engine. integration/mcp/setup.sh
// installs the clients; the tests need RCP_MCP_PYTHON,
// RCP_LANGGRAPH_PYTHON, RCP_MCP_NODE, RCP_MCP_NODE_MODULES and
// RCP_MCP_INSPECTOR (and RCP_ES_URL, RCP_OS_URL, RCP_QDRANT_ADDR and
// RCP_EMBED_URL for the engine cases), and fail instead of skipping under
// RCP_REQUIRE_ENGINES.
package mcp
