package elasticsearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/eserrors"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Optional features: unit "document" (collapse), recency (function_score
// exp decay) and point-in-time pagination and snapshots.

// featureEvidence proves the optional features from the mapping.
func (a *adapter) featureEvidence(fields map[string]field, st *probeState) {
	ev := st.ev
	ev.Snapshots = a.cfg.PIT
	for _, f := range ev.FilterFields {
		ev.NativeRecency = ev.NativeRecency || f.Type == filterlang.TypeDate
	}
	ev.RecencyLexicalOnly = ev.NativeRecency // function_score wraps the query, not a knn section
	name := a.cfg.DocumentIDField
	if name == "" {
		return
	}
	f, ok := fields[name]
	if !ok || f.Type != "keyword" || !f.Indexed {
		ev.Notes = append(ev.Notes, fmt.Sprintf("document_id_field %s is not an indexed keyword field; unit document is not offered", name))
		return
	}
	st.docField = name
	ev.Units = []string{"chunk", "document"}
}

// keepAlive is the point-in-time keep-alive in ES time units.
func (a *adapter) keepAlive() string {
	d := a.cfg.PITKeepAlive
	if d <= 0 {
		d = time.Minute
	}
	return strconv.FormatInt(int64(d/time.Second), 10) + "s"
}

// pitState is Candidates.Next: the point in time, the recency origin
// fixed on the first page (so scores do not drift between pages) and
// whether the client pinned it (then it is never closed by us).
type pitState struct {
	ID     string `json:"pit"`
	Origin int64  `json:"origin,omitempty"`
	Pinned bool   `json:"pinned,omitempty"`
	// Reopened: the first page's point in time lost a shard copy and the
	// page was served from a fresh one (never sent).
	Reopened bool `json:"-"`
}

// pitPlan decides how a stage uses a point in time. The plan's Op then
// is "POST /_search#<params>": the fragment is read by Search and never
// sent. open=1 opens one first; page=1 sorts for search_after and asks
// for a continuation; index=<name> opens it on a tenant's index (else the
// configured one).
func pitPlan(cfg *Config, req *adapters.SearchRequest, s *dsl.Search, op *string, tenant string) error {
	if !cfg.PIT || req.Stage == adapters.StageHybrid {
		return nil
	}
	page := (req.Paginate || req.Resume != nil) && req.Unit != "document" // collapse forbids search_after with two sorts
	var ps pitState
	switch {
	case req.Resume != nil:
		if err := json.Unmarshal(req.Resume, &ps); err != nil || ps.ID == "" {
			return fmt.Errorf("elasticsearch: bad continuation: %v", err)
		}
	case req.IndexVersion != "":
		ps = pitState{ID: req.IndexVersion, Pinned: true}
	case !page:
		return nil
	}
	q := url.Values{}
	if ps.ID == "" {
		q.Set("open", "1")
		if tenant != "" {
			q.Set("index", tenant)
		}
	}
	if page {
		q.Set("page", "1")
		s.Sort = []any{"_score", "_shard_doc"}
		s.SearchAfter, s.From = req.After, 0
	}
	if ps.Pinned {
		q.Set("pinned", "1")
	}
	if ps.Origin != 0 {
		q.Set("origin", strconv.FormatInt(ps.Origin, 10))
	}
	s.PIT = &dsl.PIT{ID: ps.ID, KeepAlive: keepAliveOf(cfg)}
	*op = "POST /_search#" + q.Encode()
	return nil
}

func keepAliveOf(cfg *Config) string { return (&adapter{cfg: cfg}).keepAlive() }

// decayOrigin is the recency origin: the one fixed by the first page of a
// paginated request, else "now". On a date_nanos field ES parses the
// origin to nanoseconds but reads the documents' dates, the scale and the
// offset in milliseconds (verified on 8.19: every dated document scored
// 0), so there "now" is left out (ES then takes its clock in
// milliseconds: nil here) and a fixed origin is written as the instant
// that many nanoseconds after the epoch (nanosOrigin).
func decayOrigin(req *adapters.SearchRequest, nanos bool) any {
	var ps pitState
	switch {
	case req.Resume != nil && json.Unmarshal(req.Resume, &ps) == nil && ps.Origin != 0:
		if nanos {
			return nanosOrigin(ps.Origin)
		}
		return ps.Origin
	case nanos:
		return nil
	}
	return "now"
}

// nanosOrigin writes ms milliseconds since the epoch as the date that a
// date_nanos field parses to the number ms: the instant ms nanoseconds
// after the epoch, with all nine fraction digits.
func nanosOrigin(ms int64) string {
	return time.Unix(0, ms).UTC().Format("2006-01-02T15:04:05.000000000Z")
}

// functionScore is a function_score query with one exp decay; ES's Query
// interface is sealed, so it travels in recencyBody.
type functionScore struct {
	Query     dsl.Query `json:"query"`
	Functions []any     `json:"functions"`
	ScoreMode string    `json:"score_mode"`
	BoostMode string    `json:"boost_mode"`
}

// recencyBody is a _search body whose query is replaced (the outer field
// wins over the embedded one in encoding/json).
type recencyBody struct {
	*dsl.Search
	Query map[string]*functionScore `json:"query"`
}

// withRecency multiplies the lexical score by 0.5^(age/halfLife) on the
// date field: exp decay with scale = halfLifeDays, decay 0.5, offset 0
// (§7.7). Documents without the field keep multiplier 1 (ES decay).
func withRecency(st *probeState, req *adapters.SearchRequest, s *dsl.Search) (any, error) {
	rc := req.Recency
	if rc == nil {
		return s, nil
	}
	native, ok := st.native[rc.Field]
	if !ok || st.fields[rc.Field].Type != "date" && st.fields[rc.Field].Type != "date_nanos" {
		return nil, fmt.Errorf("elasticsearch: recency field %q is not a date field", rc.Field)
	}
	params := map[string]any{"scale": halfLife(rc.HalfLifeDays), "offset": "0d", "decay": 0.5}
	if origin := decayOrigin(req, st.fields[rc.Field].Type == "date_nanos"); origin != nil {
		params["origin"] = origin
	}
	decay := map[string]any{"exp": map[string]any{native: params}}
	fs := &functionScore{Query: s.Query, Functions: []any{decay}, ScoreMode: "multiply", BoostMode: "multiply"}
	return &recencyBody{Search: s, Query: map[string]*functionScore{"function_score": fs}}, nil
}

// halfLife is the decay scale: whole days as "<n>d", else milliseconds.
func halfLife(days float64) string {
	if days == float64(int64(days)) {
		return strconv.FormatInt(int64(days), 10) + "d"
	}
	return strconv.FormatInt(int64(days*24*3600*1000+0.5), 10) + "ms"
}

// searchPIT runs a plan whose Op carries a point-in-time fragment:
// opening the point in time first when asked, fixing the recency origin,
// and returning the continuation and snapshot. decoded names the _source
// members read as Go values (searchBody).
func (a *adapter) searchPIT(ctx context.Context, p *adapters.Plan, frag string, decoded []string) (*dsl.SearchResponse, *pitState, error) {
	q, _ := url.ParseQuery(frag)
	body := p.Body
	ps := &pitState{Pinned: q.Get("pinned") == "1"}
	ps.Origin, _ = strconv.ParseInt(q.Get("origin"), 10, 64)
	if q.Get("open") == "1" {
		id, err := a.openPIT(ctx, q.Get("index"))
		if err != nil {
			return nil, nil, err
		}
		ps.Origin = time.Now().UnixMilli()
		if body, err = fillPIT(body, id, ps.Origin); err != nil {
			return nil, nil, err
		}
		if body, err = pinNanosOrigin(body, ps.Origin); err != nil {
			return nil, nil, err
		}
	}
	sr, err := a.searchBody(ctx, "/_search", body, decoded)
	if err == nil {
		if err = incomplete(sr); err != nil {
			sr = nil
		}
	}
	if err != nil && snapshotLost(err) {
		switch {
		case ps.Pinned:
			return nil, nil, errPinnedLost(err)
		case q.Get("open") != "1":
			// A fresh point in time would page another snapshot, with
			// other _shard_doc tie-breakers: search_after from the lost one
			// could skip or repeat hits, so the cursor ends here.
			return nil, nil, errCursorLost(err)
		}
		// A first page has no search_after: a fresh point in time serves
		// it exactly.
		id, oerr := a.openPIT(ctx, q.Get("index"))
		if oerr != nil {
			return nil, nil, oerr
		}
		if body, oerr = fillPIT(body, id, ps.Origin); oerr != nil {
			return nil, nil, oerr
		}
		if sr, err = a.searchBody(ctx, "/_search", body, decoded); err == nil {
			err = incomplete(sr)
		}
		ps.Reopened = true
	}
	if err != nil {
		return nil, nil, err
	}
	ps.ID = sr.PITID
	return sr, ps, nil
}

// lostTypes are the shard failure types that mean a point in time lost a
// shard copy: its search context is gone, or the node holding it is.
var lostTypes = []string{"search_context_missing_exception", "node_not_connected_exception",
	"node_disconnected_exception", "node_closed_exception", "connect_transport_exception",
	"no_shard_available_action_exception"}

// incomplete is the error of an answer that timed out or lost shards (no
// partial results are returned); searchPIT checks it before decoding, to
// tell a point in time that lost a shard copy from other failures.
func incomplete(sr *dsl.SearchResponse) error {
	switch {
	case sr.TimedOut:
		return &errPartial{what: "timed_out"}
	case sr.Shards.Failed > 0:
		return &errPartial{fmt.Sprintf("%d of %d shards failed", sr.Shards.Failed, sr.Shards.Total), shardFailureTypes(sr)}
	case sr.Shards.Unanswered() > 0:
		return &errPartial{what: fmt.Sprintf("%d of %d shards did not answer", sr.Shards.Unanswered(), sr.Shards.Total)}
	}
	return nil
}

// snapshotLost reports whether err says the point in time can no longer
// be served whole: a search context missing on every shard (an error
// answer) or shards whose context or node is gone (a partial answer).
func snapshotLost(err error) bool {
	var ee *Error
	var pe *errPartial
	switch {
	case errors.As(err, &ee):
		return slices.Contains(ee.Cause.Types(), "search_context_missing_exception")
	case errors.As(err, &pe):
		return eserrors.HasAny(pe.types, lostTypes)
	}
	return false
}

// errCursorLost is the answer to a continuation whose point in time lost
// a shard copy or lapsed: the cursor can no longer be served (-32015, not
// retryable, §12.2); the client restarts pagination.
func errCursorLost(cause error) error {
	return final(rcp.NewError(rcp.CodeNotFound, "cursor expired: the engine lost the snapshot it paged; restart pagination"), cause)
}

// errPinnedLost is the answer to a pinned indexVersion whose point in time
// lost a shard copy or lapsed: that snapshot is no longer available
// (-32016, §12.1); it is never silently replaced by another.
func errPinnedLost(cause error) error {
	return final(rcp.NewError(rcp.CodeConflict, "indexVersion no longer available: the engine lost that snapshot"), cause)
}

// final marks e not retryable (data.retryable false: the same request
// cannot succeed) and keeps cause for the logs.
func final(e *rcp.Error, cause error) error {
	no := false
	e.Data = &rcp.ErrorData{Retryable: &no}
	return e.WithCause(cause)
}

// fillPIT sets the opened point in time's id and pins the recency origin
// ("now" becomes the first page's clock, in ms since the epoch).
func fillPIT(body json.RawMessage, id string, origin int64) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("elasticsearch: plan body: %w", err)
	}
	var pit dsl.PIT
	_ = json.Unmarshal(m["pit"], &pit)
	pit.ID = id
	m["pit"], _ = json.Marshal(pit)
	out, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	// Escaped query text cannot contain this unescaped byte sequence.
	return []byte(strings.ReplaceAll(string(out), `"origin":"now"`, `"origin":`+strconv.FormatInt(origin, 10))), nil
}

// pinNanosOrigin gives a recency decay without an origin (a date_nanos
// field, see decayOrigin) the first page's clock, origin ms since the
// epoch, so later pages score alike. Every other part of the body is
// kept byte for byte.
func pinNanosOrigin(body json.RawMessage, origin int64) (json.RawMessage, error) {
	path := []string{"query", "function_score", "functions"}
	raw, ok := dsl.Lookup(body, path...)
	if !ok {
		return body, nil
	}
	var fns []map[string]map[string]map[string]json.RawMessage // [{"exp":{field:{params}}}]
	if err := json.Unmarshal(raw, &fns); err != nil || len(fns) != 1 {
		return body, nil
	}
	for _, params := range fns[0]["exp"] {
		if _, ok := params["origin"]; ok {
			return body, nil
		}
		params["origin"], _ = json.Marshal(nanosOrigin(origin))
	}
	fnsJSON, err := json.Marshal(fns)
	if err != nil {
		return nil, fmt.Errorf("elasticsearch: plan body: %w", err)
	}
	return setPath(body, fnsJSON, path...)
}

// setPath replaces the value at a path of object members in doc.
func setPath(doc json.RawMessage, v json.RawMessage, path ...string) (json.RawMessage, error) {
	if len(path) == 0 {
		return v, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(doc, &m); err != nil {
		return nil, fmt.Errorf("elasticsearch: plan body: %w", err)
	}
	inner, err := setPath(m[path[0]], v, path[1:]...)
	if err != nil {
		return nil, err
	}
	m[path[0]] = inner
	return json.Marshal(m)
}

// openPIT opens a point in time on the target (POST /<index>/_pit), or
// on a tenant's index, which may not exist yet.
func (a *adapter) openPIT(ctx context.Context, tenant string) (string, error) {
	path := "/" + url.PathEscape(a.cfg.Index) + "/_pit?keep_alive=" + a.keepAlive()
	if tenant != "" {
		path = "/" + url.PathEscape(tenant) + "/_pit?ignore_unavailable=true&keep_alive=" + a.keepAlive()
	}
	res, err := a.do(ctx, http.MethodPost, path, nil, false)
	if err != nil {
		return "", err
	}
	var out struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(res.Body, &out); err != nil || out.ID == "" {
		return "", fmt.Errorf("elasticsearch: open point in time: %v", err)
	}
	return out.ID, nil
}

// Release implements adapters.Releaser: closes the point in time after
// the last page unless the client pinned it (it then lives until its
// keep-alive lapses).
func (a *adapter) Release(ctx context.Context, next json.RawMessage) error {
	var ps pitState
	if err := json.Unmarshal(next, &ps); err != nil || ps.ID == "" || ps.Pinned {
		return err
	}
	body, _ := json.Marshal(map[string]string{"id": ps.ID})
	_, err := a.do(ctx, http.MethodDelete, "/_pit", body, false)
	return err
}

var _ adapters.Releaser = (*adapter)(nil)

// docID is the document a hit belongs to (unit "document").
func docID(st *probeState, src map[string]any) string {
	if st.docField == "" {
		return ""
	}
	switch v := src[st.docField].(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}

// checkFeatures rejects feature combinations this adapter cannot serve
// exactly: recency needs a query to wrap (a kNN section cannot be), and
// unit document needs the configured document-id field.
func checkFeatures(st *probeState, req *adapters.SearchRequest) error {
	if req.Recency != nil && req.Stage != adapters.StageLexical {
		return rcp.OptionUnsupported("recency", "recency decay applies to sparse retrieval only on this backend (a kNN search cannot be rescored exactly)")
	}
	if req.Unit == "document" && st.docField == "" {
		return rcp.OptionUnsupported("document", "unit document needs document_id_field")
	}
	return nil
}
