package jsonrpc

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/rcp-sidecar/rcp-sidecar/rcp/internal/jsonscan"
)

// Member is one decoded message: exactly one of Request, Response and Err is
// set, except that Err with Code CodeInvalidParams comes with its Request so
// the reply can echo the id. ID is what a reply to this member must carry.
type Member struct {
	Request  *Request
	Response *Response
	Err      *DecodeError
	ID       ID
}

// Frame is one decoded wire frame: a single message or a batch (§11).
type Frame struct {
	Batch   bool
	Members []Member
}

// DecodeFrame decodes one frame. A frame-level error (invalid JSON -32700,
// empty batch or non-object frame -32600) is answered once with id null;
// otherwise per-member problems are reported in Member.Err.
//
// Decisions (§4.1, §11, §12, JSON-RPC 2.0 §5): a member that is not a
// well-formed request — not an object, jsonrpc not "2.0", method not a
// string, id of a type other than string/number (null included, §4.7) — is
// -32600 with id null, as §11 prescribes for batch members, since its id
// cannot be trusted. A well-formed request whose params is present but not
// an object is -32602 with data.field "params" and the id echoed: the frame
// is a valid JSON-RPC request, but RCP requires named params (§4.1) and §12
// assigns malformed params to -32602. A null params is absent (§4.6).
func DecodeFrame(b []byte) (*Frame, *DecodeError) {
	b = bytes.TrimSpace(b)
	if !json.Valid(b) {
		return nil, &DecodeError{Code: CodeParseError, Message: "parse error: invalid JSON"}
	}
	if len(b) > 0 && b[0] == '[' {
		var raws [][]byte
		if err := jsonscan.EachElement(b, func(_ int, v []byte) error { raws = append(raws, v); return nil }); err != nil {
			return nil, &DecodeError{Code: CodeParseError, Message: "parse error"}
		}
		if len(raws) == 0 {
			return nil, &DecodeError{Code: CodeInvalidRequest, Message: "invalid request: empty batch"}
		}
		f := &Frame{Batch: true, Members: make([]Member, len(raws))}
		for i, r := range raws {
			f.Members[i] = decodeMember(r)
		}
		return f, nil
	}
	return &Frame{Members: []Member{decodeMember(b)}}, nil
}

func invalid(msg string) Member {
	return Member{Err: &DecodeError{Code: CodeInvalidRequest, Message: "invalid request: " + msg}, ID: NullID}
}

// envelope holds the raw values of the members a message may carry; a
// repeated member keeps its last value, as encoding/json does.
type envelope struct {
	jsonrpc, method, id, params, result, error []byte
}

func (e *envelope) set(rawKey, value []byte) error {
	name, plain := jsonscan.Plain(rawKey)
	if !plain {
		s, err := jsonscan.Name(rawKey)
		if err != nil {
			return err
		}
		name = []byte(s)
	}
	switch string(name) {
	case "jsonrpc":
		e.jsonrpc = value
	case "method":
		e.method = value
	case "id":
		e.id = value
	case "params":
		e.params = value
	case "result":
		e.result = value
	case "error":
		e.error = value
	}
	return nil
}

// decodeMember decodes one object with exact (case-sensitive) member names.
func decodeMember(b []byte) Member {
	var env envelope
	it := jsonscan.Object(b)
	for k, v, ok := it.Next(); ok; k, v, ok = it.Next() {
		if env.set(k, v) != nil {
			return invalid("not an object")
		}
	}
	if it.Err() != nil {
		return invalid("not an object")
	}
	if version, ok := stringValue(env.jsonrpc); !ok || version != Version {
		return invalid(`jsonrpc must be "2.0"`)
	}
	if env.method != nil {
		return decodeRequest(&env)
	}
	if (env.result != nil) != (env.error != nil) {
		return decodeResponse(&env)
	}
	return invalid("neither a request nor a response")
}

// stringValue decodes a JSON string member; null decodes to "" as
// encoding/json leaves a string unset.
func stringValue(raw []byte) (string, bool) {
	if len(raw) == 0 {
		return "", false
	}
	if len(raw) >= 2 && raw[0] == '"' && !slices.ContainsFunc(raw[1:len(raw)-1], func(c byte) bool { return c == '\\' || c < 0x20 || c >= 0x80 }) {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

func decodeRequest(env *envelope) Member {
	r := &Request{}
	var ok bool
	if r.Method, ok = stringValue(env.method); !ok {
		return invalid("method must be a string")
	}
	if env.id != nil {
		_ = r.ID.UnmarshalJSON(env.id)
		if !r.ID.IsValid() {
			return invalid("id must be a string or a number")
		}
	}
	m := Member{Request: r, ID: r.ID}
	switch p := env.params; {
	case len(p) == 0 || string(p) == "null":
	case p[0] == '{':
		r.Params = p
	default:
		m.Err = &DecodeError{Code: CodeInvalidParams, Message: "params must be an object", Field: "params"}
	}
	return m
}

func decodeResponse(env *envelope) Member {
	resp := &Response{}
	if env.id != nil {
		_ = resp.ID.UnmarshalJSON(env.id)
	}
	if !resp.ID.IsValid() && !resp.ID.IsNull() {
		return invalid("response id must be a string, a number or null")
	}
	if env.error != nil {
		resp.Error = &WireError{}
		if json.Unmarshal(env.error, resp.Error) != nil {
			return invalid("malformed error object")
		}
	} else {
		resp.Result = env.result
	}
	return Member{Response: resp, ID: resp.ID}
}
