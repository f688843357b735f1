package dsl

import (
	"bytes"
	"encoding/json"
	"strings"
)

// BulkAction is one action line of a _bulk request.
type BulkAction struct {
	// Op is "index", "create", "update" or "delete".
	Op    string
	Index string
	ID    string
	// Doc is the source line (omitted for delete).
	Doc any
}

// EncodeBulk renders actions as NDJSON for _bulk; every line ends in "\n".
func EncodeBulk(actions []BulkAction) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, a := range actions {
		meta := map[string]string{"_id": a.ID}
		if a.Index != "" {
			meta["_index"] = a.Index
		}
		if err := enc.Encode(map[string]any{a.Op: meta}); err != nil {
			return nil, err
		}
		if a.Op == "delete" {
			continue
		}
		if err := enc.Encode(a.Doc); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// BulkResponse is a _bulk response.
type BulkResponse struct {
	Took   int64                       `json:"took"`
	Errors bool                        `json:"errors"`
	Items  []map[string]BulkItemResult `json:"items"`
}

// BulkItemResult is the outcome of one action.
type BulkItemResult struct {
	Index  string      `json:"_index"`
	ID     string      `json:"_id"`
	Status int         `json:"status"`
	Result string      `json:"result,omitempty"` // created, updated, deleted, not_found, noop
	Error  *ErrorCause `json:"error,omitempty"`
}

// Item returns the single result of an items entry and its op name.
func Item(m map[string]BulkItemResult) (string, BulkItemResult) {
	for op, r := range m {
		return op, r
	}
	return "", BulkItemResult{}
}

// mappingLimits are the index settings whose limit a document can exceed
// by the fields it adds, keyed by the start of the engine's reason.
var mappingLimits = []struct{ reason, setting string }{
	{"Limit of total fields", "index.mapping.total_fields.limit"},
	{"Limit of mapping depth", "index.mapping.depth.limit"},
	{"Limit of nested fields", "index.mapping.nested_fields.limit"},
	{"Field name [", "index.mapping.field_name_length.limit"},
}

// MappingLimit reports which mapping limit of the index a bulk item's
// error says the document exceeded (Elasticsearch and OpenSearch word it
// alike), by the index setting that sets it.
func MappingLimit(c *ErrorCause) (setting string, ok bool) {
	for ; c != nil; c = c.CausedBy {
		reason := c.Reason
		if i := strings.Index(reason, "] "); strings.HasPrefix(reason, "[") && i > 0 {
			reason = reason[i+2:] // "[1:29] failed to parse: Limit …"
		}
		reason = strings.TrimPrefix(reason, "failed to parse: ")
		for _, l := range mappingLimits {
			if strings.HasPrefix(reason, l.reason) && (l.reason != "Field name [" || strings.Contains(reason, "is longer than the limit")) {
				return l.setting, true
			}
		}
	}
	return "", false
}
