// Package mcptest checks MCP tool schemas for portability: that a client
// whose schema dialect is a single-type subset of JSON Schema (function
// declarations of several model APIs) can take them as they are.
package mcptest

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Unportable lists what keeps schema (a tool's input or output schema,
// any JSON-shaped value) from being portable, one "path: problem" each;
// none when it is portable. It walks the describing keywords (properties,
// items, additionalProperties, anyOf, oneOf, $defs) and requires that
//   - every type is a single name, never an array of names;
//   - the root, every property, every items and every $defs entry says
//     what it is: a type, a local $ref to a $defs entry, or an anyOf/oneOf
//     whose every branch does;
//   - a schema with properties has type object;
//   - every $ref is "#/$defs/<name>" and the entry exists.
func Unportable(schema any) []string {
	var root map[string]any
	b, err := json.Marshal(schema)
	if err != nil || json.Unmarshal(b, &root) != nil || root == nil {
		return []string{"$: not a JSON object"}
	}
	defs, _ := root["$defs"].(map[string]any)
	c := &checker{defs: defs}
	c.typed("$", root)
	c.walk("$", root)
	sort.Strings(c.out)
	return c.out
}

type checker struct {
	defs map[string]any
	out  []string
}

func (c *checker) add(path, format string, args ...any) {
	c.out = append(c.out, path+": "+fmt.Sprintf(format, args...))
}

// typed requires s to say what it is.
func (c *checker) typed(path string, v any) {
	s, ok := v.(map[string]any)
	if !ok {
		c.add(path, "not a schema object")
		return
	}
	if _, ok := s["type"]; ok {
		return
	}
	if ref, ok := s["$ref"].(string); ok {
		name, found := strings.CutPrefix(ref, "#/$defs/")
		if !found || c.defs[name] == nil {
			c.add(path, "$ref %q does not resolve in $defs", ref)
		}
		return
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			for i, a := range alts {
				c.typed(fmt.Sprintf("%s.%s[%d]", path, k, i), a)
			}
			return
		}
	}
	c.add(path, "no type")
}

// walk checks s and every schema it describes.
func (c *checker) walk(path string, v any) {
	s, ok := v.(map[string]any)
	if !ok {
		return
	}
	if t, ok := s["type"]; ok {
		if _, single := t.(string); !single {
			c.add(path, "type %v is not a single type", t)
		}
	}
	if ref, ok := s["$ref"].(string); ok {
		if name, found := strings.CutPrefix(ref, "#/$defs/"); !found || c.defs[name] == nil {
			c.add(path, "$ref %q does not resolve in $defs", ref)
		}
	}
	if props, ok := s["properties"].(map[string]any); ok {
		if s["type"] != "object" {
			c.add(path, "has properties but type %v", s["type"])
		}
		for _, n := range slices.Sorted(maps.Keys(props)) {
			p := path + ".properties." + n
			c.typed(p, props[n])
			c.walk(p, props[n])
		}
	}
	if it, ok := s["items"].(map[string]any); ok {
		c.typed(path+".items", it)
		c.walk(path+".items", it)
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok {
		c.walk(path+".additionalProperties", ap)
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok {
			for i, a := range alts {
				c.walk(fmt.Sprintf("%s.%s[%d]", path, k, i), a)
			}
		}
	}
	if defs, ok := s["$defs"].(map[string]any); ok {
		for _, n := range slices.Sorted(maps.Keys(defs)) {
			p := path + ".$defs." + n
			c.typed(p, defs[n])
			c.walk(p, defs[n])
		}
	}
}
