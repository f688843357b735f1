// Package mcp checks the sidecar's MCP server with clients independent of
// its own Go SDK: the reference Python SDK (PyPI "mcp" 2.x) over stdio and
// Streamable HTTP, against the memory engine and a real Elasticsearch,
// and a LangGraph agent through langchain-mcp-adapters (examples/langgraph)
// against the demo. integration/mcp/setup.sh installs the clients; the
// tests need RCP_MCP_PYTHON and RCP_LANGGRAPH_PYTHON (and RCP_ES_URL for
// the Elasticsearch case), and fail instead of skipping under
// RCP_REQUIRE_ENGINES.
package mcp
