// Package jsonrpc is the JSON-RPC 2.0 envelope used by RCP/1 (§4): request
// ids kept byte-exact, requests, responses, batches (§11) and a strict
// encoder that never emits NaN, Infinity or an embedded newline (§4.6, §5.1).
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// ID is a request id kept as its exact JSON text, so that it is echoed
// unchanged (same type and value, §4.7) — including integers beyond 2^53 and
// numbers such as 1.5 or 1e3. The zero ID is absent (a notification).
type ID struct {
	raw string
}

// NullID is the explicit null id of a response to an unparseable request.
var NullID = ID{raw: "null"}

// StringID returns the id holding the JSON string s.
func StringID(s string) ID {
	b, _ := json.Marshal(s)
	return ID{raw: string(b)}
}

// IntID returns the id holding the JSON integer n.
func IntID(n int64) ID { return ID{raw: strconv.FormatInt(n, 10)} }

// IsAbsent reports whether the id member was missing.
func (id ID) IsAbsent() bool { return id.raw == "" }

// IsNull reports whether the id was an explicit JSON null.
func (id ID) IsNull() bool { return id.raw == "null" }

// IsValid reports whether id is a string or a number, the only types a
// request id may have (§4.1).
func (id ID) IsValid() bool {
	return id.raw != "" && (id.raw[0] == '"' || id.raw[0] == '-' || (id.raw[0] >= '0' && id.raw[0] <= '9'))
}

// Raw returns the id's exact JSON text ("" when absent).
func (id ID) Raw() string { return id.raw }

// Key returns a comparable key for correlating requests: two ids with the
// same JSON value (e.g. "a" and "\u0061") share a key; a string and a number
// never do.
func (id ID) Key() string {
	if len(id.raw) > 0 && id.raw[0] == '"' {
		var s string
		if json.Unmarshal([]byte(id.raw), &s) == nil {
			return "s" + s
		}
	}
	return "n" + id.raw
}

// String returns the raw JSON text, or "<absent>".
func (id ID) String() string {
	if id.raw == "" {
		return "<absent>"
	}
	return id.raw
}

// MarshalJSON writes the original bytes; an absent id is written as null.
func (id ID) MarshalJSON() ([]byte, error) {
	if id.raw == "" {
		return []byte("null"), nil
	}
	return []byte(id.raw), nil
}

// UnmarshalJSON keeps the compacted JSON text of the id, whatever its type;
// use IsValid to check that it is a string or a number.
func (id *ID) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && (b[0] == '"' && isPlainString(b) || b[0] == '-' || b[0] >= '0' && b[0] <= '9') && json.Valid(b) {
		id.raw = string(b) // a valid scalar holds no insignificant space
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return err
	}
	id.raw = buf.String()
	return nil
}

// isPlainString reports whether the JSON string b has no escapes and no
// control characters, so its text is its own compact form.
func isPlainString(b []byte) bool {
	if len(b) < 2 {
		return false
	}
	for _, c := range b[1 : len(b)-1] {
		if c == '\\' || c < 0x20 {
			return false
		}
	}
	return true
}
