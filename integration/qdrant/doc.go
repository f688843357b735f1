// Package edgefront holds the test infrastructure that serves Qdrant's
// engine to the Qdrant adapter's tests: edge_front.py, a gRPC front over
// Qdrant Edge (PyPI qdrant-edge-py, Qdrant's Rust engine as an in-process
// library), and setup.sh/start.sh/stop.sh, which install it into a pinned
// venv and run it on a free loopback port for CI (RCP_QDRANT_ADDR in
// integration/.work/qdrant.env). The front is not a Qdrant server and is
// never part of the rcp-sidecar binary. The package's Go test runs the
// front's own pytest suite (test_edge_front.py).
package edgefront
