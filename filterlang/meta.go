package filterlang

import (
	"slices"
	"strings"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Document metadata paths (§7.10). A field path such as "org.id" can be
// spelled two ways in a document's meta: as the flat key "org.id" or as
// the object {"org":{"id":…}}. Search engines index both spellings as the
// same field, so a document carrying both holds two values for one field.
// CanonicalMeta removes the choice: every path has exactly one spelling,
// nested objects, and a document that gives one path two values is
// refused.

// CanonicalMeta returns meta with every dotted key expanded into nested
// objects, the one form index/add stores. Objects are merged where their
// paths do not overlap ({"org":{"name":…},"org.id":…} is one object with
// two fields); objects inside arrays are canonicalised too. It refuses,
// with -32602 on at+"."+path (at is the params path of meta, e.g.
// "documents[3].meta"):
//   - a key with an empty path segment ("", ".a", "a.", "a..b");
//   - a path given twice, flat and nested or twice flat;
//   - a value where a longer path needs an object ({"org":"x","org.id":…}).
//
// meta is not modified; the result shares no map or slice with it. A nil
// or empty meta yields nil.
func CanonicalMeta(meta map[string]any, at string) (map[string]any, *rcp.Error) {
	if len(meta) == 0 {
		return nil, nil
	}
	out := make(map[string]any, len(meta))
	if err := canonInto(out, meta, "", at); err != nil {
		return nil, err
	}
	return out, nil
}

// canonInto merges src (whose keys may be dotted) into dst, a canonical
// object at path prefix ("" for the root).
func canonInto(dst, src map[string]any, prefix, at string) *rcp.Error {
	keys := make([]string, 0, len(src))
	for k := range src {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the same request always reports the same field
	for _, k := range keys {
		segs := strings.Split(k, ".")
		if slices.Contains(segs, "") {
			return rcp.InvalidParams(joinPath(at, prefix, k), "meta key %q has an empty path segment", k)
		}
		cur := dst
		for i, seg := range segs[:len(segs)-1] {
			next, err := child(cur, seg, joinPath("", prefix, strings.Join(segs[:i+1], ".")), at)
			if err != nil {
				return err
			}
			cur = next
		}
		last := segs[len(segs)-1]
		path := joinPath("", prefix, k)
		if sub, ok := src[k].(map[string]any); ok {
			m, err := child(cur, last, path, at)
			if err != nil {
				return err
			}
			if err := canonInto(m, sub, path, at); err != nil {
				return err
			}
			continue
		}
		if _, dup := cur[last]; dup {
			return rcp.InvalidParams(joinPath(at, "", path), "meta gives %s more than once (flat and nested keys name the same field); use one spelling", path)
		}
		v, err := canonValue(src[k], path, at)
		if err != nil {
			return err
		}
		cur[last] = v
	}
	return nil
}

// child returns the object under key (at path) in cur, creating it when
// absent; a value that is not an object there is a conflict.
func child(cur map[string]any, key, path, at string) (map[string]any, *rcp.Error) {
	existing, ok := cur[key]
	if !ok {
		m := map[string]any{}
		cur[key] = m
		return m, nil
	}
	if m, ok := existing.(map[string]any); ok {
		return m, nil
	}
	return nil, rcp.InvalidParams(joinPath(at, "", path), "meta gives %s a value and also fields below it; use one spelling", path)
}

// canonValue copies a leaf or array value, canonicalising objects inside
// arrays (engines index {"org":[{"id":…}]} as org.id too).
func canonValue(v any, path, at string) (any, *rcp.Error) {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		if err := canonInto(m, x, path, at); err != nil {
			return nil, err
		}
		return m, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, err := canonValue(e, path, at)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	return v, nil
}

func joinPath(at, prefix, key string) string {
	p := key
	if prefix != "" {
		p = prefix + "." + key
	}
	if at != "" {
		return at + "." + p
	}
	return p
}

// MetaAt looks path up in canonical meta. found reports that meta gives a
// value at path or at one of its prefixes: where is the path that holds
// it (path itself, or a prefix whose value is not an object, such as a
// string or an array where path needs an object) and v that value.
func MetaAt(meta map[string]any, path string) (where string, v any, found bool) {
	cur := meta
	segs := strings.Split(path, ".")
	for i, seg := range segs {
		val, ok := cur[seg]
		if !ok {
			return "", nil, false
		}
		if i == len(segs)-1 {
			return path, val, true
		}
		m, isObj := val.(map[string]any)
		if !isObj {
			return strings.Join(segs[:i+1], "."), val, true
		}
		cur = m
	}
	return "", nil, false
}

// WalkMeta calls fn for every leaf of canonical meta with its dotted path,
// in path order: a scalar, null or an array of scalars is one leaf; an
// array holding objects or arrays is walked element by element under the
// array's own path, as engines index it.
func WalkMeta(meta map[string]any, fn func(path string, v any)) {
	walkObject(meta, "", fn)
}

func walkObject(m map[string]any, prefix string, fn func(string, any)) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		walkValue(m[k], joinPath("", prefix, k), fn)
	}
}

func walkValue(v any, path string, fn func(string, any)) {
	switch x := v.(type) {
	case map[string]any:
		walkObject(x, path, fn)
	case []any:
		if !slices.ContainsFunc(x, isContainer) {
			fn(path, v)
			return
		}
		for _, e := range x {
			walkValue(e, path, fn)
		}
	default:
		fn(path, v)
	}
}

func isContainer(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

// MetaLeaves returns the distinct leaf paths of canonical meta that carry
// a value (nulls and empty arrays add no field), sorted.
func MetaLeaves(meta map[string]any) []string {
	var out []string
	WalkMeta(meta, func(path string, v any) {
		if a, ok := v.([]any); v == nil || ok && len(a) == 0 {
			return
		}
		if n := len(out); n == 0 || out[n-1] != path {
			out = append(out, path)
		}
	})
	slices.Sort(out)
	return slices.Compact(out)
}

// Lookup returns the value of the filter field name in meta: the key
// itself when present, otherwise the dotted path through nested objects.
// Arrays of objects on the way contribute every element's value, as
// engines index them; the result is then an array.
func Lookup(meta map[string]any, name string) any {
	if v, ok := meta[name]; ok {
		return v
	}
	for i := 0; i < len(name); i++ {
		if name[i] != '.' {
			continue
		}
		if sub, ok := meta[name[:i]]; ok {
			if v := lookupIn(sub, name[i+1:]); v != nil {
				return v
			}
		}
	}
	return nil
}

func lookupIn(v any, rest string) any {
	switch x := v.(type) {
	case map[string]any:
		return Lookup(x, rest)
	case []any:
		var out []any
		for _, e := range x {
			switch got := lookupIn(e, rest).(type) {
			case nil:
			case []any:
				out = append(out, got...)
			default:
				out = append(out, got)
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	}
	return nil
}

// EqualValue reports whether a stored metadata value equals the
// normalised condition value want (a Cond.Value of an eq condition) the
// way eq compares them, and is a single value, not an array.
func EqualValue(v, want any) bool {
	switch v.(type) {
	case nil, map[string]any, []any:
		return false
	}
	return equal(v, want)
}
