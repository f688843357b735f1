package dsl

import (
	"bytes"
	"encoding/json"
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
