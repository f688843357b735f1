// Package rcptest holds test helpers for RCP/1: JSON-Schema validation of
// frames and results against the embedded rcp-1.0.json, an in-memory
// NDJSON client driving a real server.Server, and StubBackend, a fake
// Backend for protocol tests. It is imported only by tests.
package rcptest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/rcp-sidecar/rcp-sidecar/rcp/schema"
)

const schemaURL = "rcp-1.0.json"

var compiled = sync.OnceValues(func() (*[2]*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema.JSON()))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	root, err := c.Compile(schemaURL)
	if err != nil {
		return nil, err
	}
	resultFor, err := c.Compile(schemaURL + "#/$defs/ResultFor")
	if err != nil {
		return nil, err
	}
	return &[2]*jsonschema.Schema{root, resultFor}, nil
})

// ValidateFrame validates one wire frame (message or batch) against the
// root of rcp-1.0.json.
func ValidateFrame(frame []byte) error {
	s, err := compiled()
	if err != nil {
		return fmt.Errorf("rcptest: schema: %w", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(frame))
	if err != nil {
		return fmt.Errorf("rcptest: frame is not JSON: %w", err)
	}
	return s[0].Validate(v)
}

// ValidateResult validates result as the result of method, through the
// schema's ResultFor binding (a response frame alone does not name its method).
func ValidateResult(method string, result json.RawMessage) error {
	s, err := compiled()
	if err != nil {
		return fmt.Errorf("rcptest: schema: %w", err)
	}
	pair, err := json.Marshal(struct {
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
	}{method, result})
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(pair))
	if err != nil {
		return err
	}
	return s[1].Validate(v)
}
