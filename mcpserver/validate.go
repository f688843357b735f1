package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// argsCheck checks a write tool's arguments against its input schema
// (indexAddSchema, indexDeleteSchema), naming the first offending
// argument by its path (documents[0].text), so a model can fix it.
type argsCheck func(raw json.RawMessage, max int) *rcp.Error

// object decodes raw as a JSON object; a non-object is -32602 at field.
func object(raw json.RawMessage, field string) (map[string]json.RawMessage, *rcp.Error) {
	var m map[string]json.RawMessage
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) || json.Unmarshal(raw, &m) != nil {
		return nil, rcp.InvalidParams(field, "%s must be an object", field)
	}
	return m, nil
}

// only refuses members of m outside allowed, in name order.
func only(m map[string]json.RawMessage, prefix string, allowed ...string) *rcp.Error {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ok := false
		for _, a := range allowed {
			ok = ok || a == n
		}
		if !ok {
			return rcp.InvalidParams(prefix+n, "unknown argument %q", prefix+n)
		}
	}
	return nil
}

// array decodes m[name] as a non-empty array of at most max elements.
func array(m map[string]json.RawMessage, name string, max int) ([]json.RawMessage, *rcp.Error) {
	raw, ok := m[name]
	if !ok {
		return nil, rcp.InvalidParams(name, "%s is required", name)
	}
	var a []json.RawMessage
	if json.Unmarshal(raw, &a) != nil || a == nil {
		return nil, rcp.InvalidParams(name, "%s must be an array", name)
	}
	if len(a) == 0 {
		return nil, rcp.InvalidParams(name, "%s must not be empty", name)
	}
	if max > 0 && len(a) > max {
		return nil, rcp.InvalidParams(name, "at most %d %s per call", max, name)
	}
	return a, nil
}

// str decodes raw as a non-empty string.
func str(raw json.RawMessage, field string) *rcp.Error {
	var s string
	if json.Unmarshal(raw, &s) != nil || s == "" {
		return rcp.InvalidParams(field, "%s must be a non-empty string", field)
	}
	return nil
}

// checkIndexAdd is the argsCheck of index_add.
func checkIndexAdd(raw json.RawMessage, max int) *rcp.Error {
	m, err := object(raw, "arguments")
	if err != nil {
		return err
	}
	if err := only(m, "", "documents"); err != nil {
		return err
	}
	docs, err := array(m, "documents", max)
	if err != nil {
		return err
	}
	for i, d := range docs {
		at := fmt.Sprintf("documents[%d]", i)
		dm, err := object(d, at)
		if err != nil {
			return err
		}
		if err := only(dm, at+".", "id", "text", "meta"); err != nil {
			return err
		}
		t, ok := dm["text"]
		if !ok {
			return rcp.InvalidParams(at+".text", "%s.text is required", at)
		}
		if err := str(t, at+".text"); err != nil {
			return err
		}
		if id, ok := dm["id"]; ok {
			if err := str(id, at+".id"); err != nil {
				return err
			}
		}
		if meta, ok := dm["meta"]; ok {
			if _, err := object(meta, at+".meta"); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkIndexDelete is the argsCheck of index_delete.
func checkIndexDelete(raw json.RawMessage, max int) *rcp.Error {
	m, err := object(raw, "arguments")
	if err != nil {
		return err
	}
	if err := only(m, "", "ids"); err != nil {
		return err
	}
	ids, err := array(m, "ids", max)
	if err != nil {
		return err
	}
	for i, id := range ids {
		if err := str(id, fmt.Sprintf("ids[%d]", i)); err != nil {
			return err
		}
	}
	return nil
}
