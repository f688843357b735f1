package jsonrpc

import (
	"bytes"
	"encoding/json"
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
		var raws []json.RawMessage
		if err := json.Unmarshal(b, &raws); err != nil {
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

// decodeMember decodes one object with exact (case-sensitive) member names.
func decodeMember(b []byte) Member {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil || obj == nil {
		return invalid("not an object")
	}
	var version string
	if v, ok := obj["jsonrpc"]; !ok || json.Unmarshal(v, &version) != nil || version != Version {
		return invalid(`jsonrpc must be "2.0"`)
	}
	if _, ok := obj["method"]; ok {
		return decodeRequest(obj)
	}
	_, hasResult := obj["result"]
	_, hasError := obj["error"]
	if hasResult != hasError {
		return decodeResponse(obj, hasError)
	}
	return invalid("neither a request nor a response")
}

func decodeRequest(obj map[string]json.RawMessage) Member {
	r := &Request{}
	if json.Unmarshal(obj["method"], &r.Method) != nil {
		return invalid("method must be a string")
	}
	if raw, ok := obj["id"]; ok {
		_ = r.ID.UnmarshalJSON(raw)
		if !r.ID.IsValid() {
			return invalid("id must be a string or a number")
		}
	}
	m := Member{Request: r, ID: r.ID}
	p := bytes.TrimSpace(obj["params"])
	switch {
	case len(p) == 0 || string(p) == "null":
	case p[0] == '{':
		r.Params = p
	default:
		m.Err = &DecodeError{Code: CodeInvalidParams, Message: "params must be an object", Field: "params"}
	}
	return m
}

func decodeResponse(obj map[string]json.RawMessage, hasError bool) Member {
	resp := &Response{}
	if raw, ok := obj["id"]; ok {
		_ = resp.ID.UnmarshalJSON(raw)
	}
	if !resp.ID.IsValid() && !resp.ID.IsNull() {
		return invalid("response id must be a string, a number or null")
	}
	if hasError {
		resp.Error = &WireError{}
		if json.Unmarshal(obj["error"], resp.Error) != nil {
			return invalid("malformed error object")
		}
	} else {
		resp.Result = obj["result"]
	}
	return Member{Response: resp, ID: resp.ID}
}
