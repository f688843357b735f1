package dsl

import (
	"encoding/json"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// SearchResponse is the part of a _search response the adapters read.
type SearchResponse struct {
	Took     int64     `json:"took"`
	TimedOut bool      `json:"timed_out"`
	Shards   ShardInfo `json:"_shards"`
	Hits     HitsInfo  `json:"hits"`
	PITID    string    `json:"pit_id,omitempty"`
}

// ShardInfo reports shard outcomes; Failures carry per-shard errors.
type ShardInfo struct {
	Total      int               `json:"total"`
	Successful int               `json:"successful"`
	Failed     int               `json:"failed"`
	Failures   []json.RawMessage `json:"failures,omitempty"`
}

// Unanswered is how many shards neither answered nor failed: OpenSearch
// counts a shard with no started copy (its only copy was on a node that
// left) in total but in neither successful nor failed.
func (s ShardInfo) Unanswered() int { return max(s.Total-s.Successful-s.Failed, 0) }

// HitsInfo is the hits section.
type HitsInfo struct {
	Total    *TotalHits `json:"total,omitempty"`
	MaxScore *float64   `json:"max_score"`
	Hits     []Hit      `json:"hits"`
}

// TotalHits is hits.total.
type TotalHits struct {
	Value    int64  `json:"value"`
	Relation string `json:"relation"`
}

// Hit is one search hit.
type Hit struct {
	Index     string                     `json:"_index"`
	ID        string                     `json:"_id"`
	Score     *float64                   `json:"_score"`
	Source    map[string]any             `json:"_source,omitempty"`
	Fields    map[string]json.RawMessage `json:"fields,omitempty"`
	Highlight map[string][]string        `json:"highlight,omitempty"`
	Sort      json.RawMessage            `json:"sort,omitempty"`
	// plains vouch for strings of this hit (its _id, the strings of the
	// decoded _source members) that DecodeSearchSpans found to need no
	// JSON escaping, or to be escaped in the reply as the RCP encoder
	// escapes them (Plain), as many as fit.
	plains [maxVouched]rcp.Plain
}

// maxVouched is how many strings of one hit are vouched for: _id, the
// content and two more (title, URI or document id) in reading order.
const maxVouched = 4

// vouch records p, a voucher for one of the hit's strings, if there is
// room.
func (h *Hit) vouch(p rcp.Plain) {
	for i := range h.plains {
		if h.plains[i] == (rcp.Plain{}) {
			h.plains[i] = p
			return
		}
	}
}

// Plain returns what the reader established about s, a string taken from
// this hit (DecodeSearchSpans): the rcp.Plain vouching that it needs no
// JSON escaping or that its escaped form in the reply is the RCP
// encoder's, or the zero Plain when that was not established or s is
// another string. A Plain names its string's bytes, which the input
// holds unchanged, so a voucher for a string later replaced (a repeated
// member) still vouches only for that string.
func (h *Hit) Plain(s string) rcp.Plain {
	for _, p := range h.plains {
		if p.For(s) {
			return p
		}
	}
	return rcp.Plain{}
}

// ErrorResponse is the JSON error body: {"error":{…},"status":N}.
type ErrorResponse struct {
	Error  *ErrorCause `json:"error"`
	Status int         `json:"status"`
}

// ErrorCause is an error or one of its causes.
type ErrorCause struct {
	Type         string         `json:"type"`
	Reason       string         `json:"reason,omitempty"`
	RootCause    []ErrorCause   `json:"root_cause,omitempty"`
	CausedBy     *ErrorCause    `json:"caused_by,omitempty"`
	FailedShards []ShardFailure `json:"failed_shards,omitempty"`
	Index        string         `json:"index,omitempty"`
	Durability   string         `json:"durability,omitempty"`
}

// ShardFailure is one failed shard of a search_phase_execution_exception.
type ShardFailure struct {
	Shard  int         `json:"shard"`
	Index  string      `json:"index"`
	Reason *ErrorCause `json:"reason"`
}

// Types returns every error type in the cause tree (self, root causes,
// caused_by chain, shard failure reasons), outermost first.
func (c *ErrorCause) Types() []string {
	if c == nil {
		return nil
	}
	out := []string{c.Type}
	for i := range c.RootCause {
		out = append(out, c.RootCause[i].Types()...)
	}
	out = append(out, c.CausedBy.Types()...)
	for _, f := range c.FailedShards {
		out = append(out, f.Reason.Types()...)
	}
	return out
}
