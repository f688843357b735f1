package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
)

// checkKeys walks raw alongside the Go type it will decode into and
// reports the first key (in sorted order) that no field accepts, by its
// full path, e.g. `unknown key "server.http.listen_adress"`.
func checkKeys(prefix string, raw any, t reflect.Type) error {
	t = deref(t)
	switch m := raw.(type) {
	case map[string]any:
		if t.Kind() == reflect.Map {
			return checkMapValues(prefix, m, t.Elem())
		}
		if t.Kind() != reflect.Struct || t == reflect.TypeFor[time.Time]() {
			return nil
		}
		return checkStruct(prefix, m, t)
	case []any:
		if t.Kind() != reflect.Slice {
			return nil
		}
		for i, e := range m {
			p := fmt.Sprintf("%s[%d].", strings.TrimSuffix(prefix, "."), i)
			if err := checkKeys(p, e, t.Elem()); err != nil {
				return err
			}
		}
	}
	return nil
}

// retiredKeys are keys that older versions accepted, each with what
// replaced it; a file that still sets one is refused with that message
// rather than "unknown key".
var retiredKeys = map[string]string{
	"server.mcp.max_sessions": "removed: MCP over Streamable HTTP keeps no sessions (every request stands alone, " +
		"on any replica), so there is nothing to cap; a client's footprint is its requests in flight, bounded by " +
		"access.max_inflight_per_key, access.max_inflight and its key's rate. Delete this key",
	"server.mcp.session_timeout": "removed: MCP over Streamable HTTP keeps no sessions, so none idles; " +
		"a request is bounded by server.deadline. Delete this key",
}

func checkStruct(prefix string, m map[string]any, t reflect.Type) error {
	for _, k := range sortedKeys(m) {
		f, ok := fieldFor(t, k)
		if !ok {
			if why, retired := retiredKeys[prefix+k]; retired {
				return &pathError{path: prefix + k, err: fmt.Errorf("%s%s: %s", prefix, k, why)}
			}
			return &pathError{path: prefix + k, err: fmt.Errorf("unknown key %q", prefix+k)}
		}
		if f == nil {
			continue // a ",remain" field accepts anything
		}
		if err := checkKeys(prefix+k+".", m[k], f.Type); err != nil {
			return err
		}
	}
	return nil
}

func checkMapValues(prefix string, m map[string]any, elem reflect.Type) error {
	for _, k := range sortedKeys(m) {
		if err := checkKeys(prefix+k+".", m[k], elem); err != nil {
			return err
		}
	}
	return nil
}

// fieldFor finds the field decoding key k the way mapstructure does: by
// tag name, else by field name, case-insensitively; squashed embedded
// structs are searched too. A nil field with ok means a remain field.
func fieldFor(t reflect.Type, k string) (*reflect.StructField, bool) {
	var remain bool
	for i := range t.NumField() {
		f := t.Field(i)
		opts := tagOpts(f)
		switch {
		case !f.IsExported() || tagName(f) == "-":
			continue
		case slices.Contains(opts, "remain"):
			remain = true
		case slices.Contains(opts, "squash") || (f.Anonymous && tagName(f) == f.Name):
			if sf, ok := fieldFor(deref(f.Type), k); ok {
				return sf, true
			}
		case strings.EqualFold(tagName(f), k):
			return &f, true
		}
	}
	return nil, remain
}

func tagName(f reflect.StructField) string {
	tag := f.Tag.Get("mapstructure")
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		return f.Name
	}
	return name
}

func tagOpts(f reflect.StructField) []string {
	parts := strings.Split(f.Tag.Get("mapstructure"), ",")
	return parts[1:]
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
