// Package schema embeds the normative RCP/1 JSON Schema (rcp-1.0.json) and
// cuts self-contained schemas for single definitions out of it.
package schema

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

//go:embed rcp-1.0.json
var raw []byte

// JSON returns a copy of rcp-1.0.json.
func JSON() []byte { return bytes.Clone(raw) }

// Def returns definition name of rcp-1.0.json as a self-contained JSON
// Schema: the definition's own keywords plus, under $defs, every
// definition it reaches through "#/$defs/..." references, so those
// references resolve unchanged. The result is a fresh map.
func Def(name string) (map[string]any, error) {
	var doc struct {
		Schema string                     `json:"$schema"`
		Defs   map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	if _, ok := doc.Defs[name]; !ok {
		return nil, fmt.Errorf("schema: no definition %q", name)
	}
	need := map[string]bool{}
	var visit func(string) error
	visit = func(n string) error {
		if need[n] {
			return nil
		}
		def, ok := doc.Defs[n]
		if !ok {
			return fmt.Errorf("schema: reference to missing definition %q", n)
		}
		need[n] = true
		for _, r := range refs(def) {
			if err := visit(r); err != nil {
				return err
			}
		}
		return nil
	}
	if err := visit(name); err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(doc.Defs[name], &out); err != nil {
		return nil, err
	}
	delete(need, name)
	if len(need) > 0 {
		names := make([]string, 0, len(need))
		for n := range need {
			names = append(names, n)
		}
		sort.Strings(names)
		defs := make(map[string]any, len(names))
		for _, n := range names {
			var d any
			if err := json.Unmarshal(doc.Defs[n], &d); err != nil {
				return nil, err
			}
			defs[n] = d
		}
		out["$defs"] = defs
	}
	out["$schema"] = doc.Schema
	return out, nil
}

// refs lists the definition names def references as "#/$defs/<name>".
func refs(def json.RawMessage) []string {
	var v any
	if json.Unmarshal(def, &v) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			for k, c := range t {
				if s, ok := c.(string); ok && k == "$ref" {
					if n, ok := strings.CutPrefix(s, "#/$defs/"); ok {
						out = append(out, n)
					}
					continue
				}
				walk(c)
			}
		case []any:
			for _, c := range t {
				walk(c)
			}
		}
	}
	walk(v)
	return out
}
