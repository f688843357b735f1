package federation

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// peekLimit bounds how much of a body CatalogHandler inspects; larger
// bodies cannot be a catalog/list call worth answering and pass through.
const peekLimit = 1 << 20

// CatalogHandler wraps next, the HTTP transport of a server over a, so
// that catalog/list is answered (§7.13). The server's method table has no
// catalog/list handler and answers an advertised but unserved method with
// -32003; the wrapper lets next run every gate (CORS, session,
// initialization, path/method match, batch limits) and replaces only those
// -32003 answers to catalog/list calls with the catalog. Endpoints of
// in-process engines are built from the request by endpoint (nil: none).
func (a *Aggregator) CatalogHandler(next http.Handler, endpoint func(r *http.Request, id string) *Endpoint) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, whole := peek(r)
		ids := catalogCalls(body, whole)
		if len(ids) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		rec := &recorder{header: http.Header{}, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		var ep func(string) *Endpoint
		if endpoint != nil {
			ep = func(id string) *Endpoint { return endpoint(r, id) }
		}
		out := rec.body.Bytes()
		if rec.status == http.StatusOK {
			out = answerCatalog(out, ids, func() any { return a.CatalogList(r.Context(), ep) })
		}
		rec.flush(w, out)
	})
}

// peek reads up to peekLimit bytes of r's body and restores it; whole
// reports whether that was the entire body.
func peek(r *http.Request) ([]byte, bool) {
	data, err := io.ReadAll(io.LimitReader(r.Body, peekLimit+1))
	whole := err == nil && len(data) <= peekLimit
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(data), r.Body), r.Body}
	return data, whole
}

// reqMember is the part of a request member the wrapper needs.
type reqMember struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// catalogCalls returns the compact ids of the catalog/list calls in a
// frame (object or batch); notifications have no id and are skipped.
func catalogCalls(body []byte, whole bool) map[string]bool {
	if !whole || !bytes.Contains(body, []byte(rcp.MethodCatalogList)) {
		return nil
	}
	var ms []reqMember
	t := bytes.TrimSpace(body)
	if len(t) > 0 && t[0] == '[' {
		if json.Unmarshal(t, &ms) != nil {
			return nil
		}
	} else {
		var m reqMember
		if json.Unmarshal(t, &m) != nil {
			return nil
		}
		ms = []reqMember{m}
	}
	ids := map[string]bool{}
	for _, m := range ms {
		if m.Method == rcp.MethodCatalogList && len(m.ID) > 0 {
			ids[compact(m.ID)] = true
		}
	}
	return ids
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// respMember is the part of a response member the wrapper inspects.
type respMember struct {
	ID    json.RawMessage `json:"id"`
	Error *struct {
		Code int `json:"code"`
	} `json:"error"`
}

// answerCatalog replaces, in a response frame (object or batch), each
// -32003 answer to one of ids with a result built by list.
func answerCatalog(frame []byte, ids map[string]bool, list func() any) []byte {
	t := bytes.TrimSpace(frame)
	if len(t) == 0 {
		return frame
	}
	if t[0] != '[' {
		return replaceMember(t, ids, list)
	}
	var members []json.RawMessage
	if json.Unmarshal(t, &members) != nil {
		return frame
	}
	for i, m := range members {
		members[i] = replaceMember(m, ids, list)
	}
	out, err := json.Marshal(members)
	if err != nil {
		return frame
	}
	return out
}

func replaceMember(m []byte, ids map[string]bool, list func() any) []byte {
	var rm respMember
	if json.Unmarshal(m, &rm) != nil || rm.Error == nil || rm.Error.Code != int(rcp.CodeCapabilityMissing) || !ids[compact(rm.ID)] {
		return m
	}
	out, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": rm.ID, "result": list()})
	if err != nil {
		return m
	}
	return out
}

// recorder buffers a response so it can be rewritten.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) WriteHeader(code int)        { r.status = code }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }

// flush writes the recorded headers and status with body out.
func (r *recorder) flush(w http.ResponseWriter, out []byte) {
	for k, v := range r.header {
		w.Header()[k] = v
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(r.status)
	_, _ = w.Write(out)
	if !bytes.HasSuffix(out, []byte("\n")) && strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		_, _ = w.Write([]byte("\n"))
	}
}
