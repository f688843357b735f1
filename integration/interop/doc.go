// Package interop holds end-to-end tests that drive the built rcp-sidecar
// binary with the official RCP Python SDK (PyPI rcp-protocol), over stdio
// and over HTTP. See README.md for the SDK's client API.
package interop
