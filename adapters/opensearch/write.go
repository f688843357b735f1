package opensearch

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/eserrors"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Upsert implements adapters.Writer with _bulk `index` actions: create or
// replace by id, so repeating a call is idempotent (§7.10). Under index
// isolation the documents go to the caller's tenant's index, created from
// the configured body first if need be.
func (a *adapter) Upsert(ctx context.Context, docs []adapters.Document) error {
	if !a.cfg.Writable {
		return rcp.NewError(rcp.CodeCapabilityMissing, "index/add is not enabled for this backend")
	}
	s := a.current()
	if s == nil {
		return errNotProbed
	}
	index := a.cfg.Index
	if ti, ts, ok, err := a.tenants.Write(ctx, true); err != nil {
		return err
	} else if ok {
		index, s = ti.Name, ts
	}
	actions := make([]dsl.BulkAction, len(docs))
	for i, d := range docs {
		actions[i] = dsl.BulkAction{Op: "index", ID: d.ID, Doc: sourceOf(s, d)}
	}
	_, err := a.bulk(ctx, index, actions, adapters.VectorFieldsOf(docs, writtenVector(s, adapters.Document{}))...)
	return err
}

// writtenVector is the field d's vector is written to: the one the
// Engine names, else the first vector field; "" when there is none.
func writtenVector(s *schema, d adapters.Document) string {
	if d.VectorField != "" {
		return d.VectorField
	}
	return queriedField(s, &adapters.SearchRequest{})
}

// sourceOf builds a document's _source: metadata, the content field and
// the vector field.
func sourceOf(s *schema, d adapters.Document) map[string]any {
	src := make(map[string]any, len(d.Meta)+2)
	for k, v := range d.Meta {
		src[k] = v
	}
	src[contentField(s)] = d.Text
	if vf := writtenVector(s, d); len(d.Vector) > 0 && vf != "" {
		src[vf] = d.Vector
	}
	return src
}

// contentField is where writes put a document's text: the probed content
// field, else "text".
func contentField(s *schema) string {
	if s.content == "" {
		return "text"
	}
	return s.content
}

// Delete implements adapters.Writer: _bulk `delete` actions; a missing id
// is not an error and only result "deleted" is counted (§7.11).
func (a *adapter) Delete(ctx context.Context, ids []string) (int, error) {
	if !a.cfg.Writable {
		return 0, rcp.NewError(rcp.CodeCapabilityMissing, "index/delete is not enabled for this backend")
	}
	index := a.cfg.Index
	if ti, s, ok, err := a.tenants.Write(ctx, false); err != nil {
		return 0, err
	} else if ok && s == nil {
		return 0, nil // the tenant has written nothing yet
	} else if ok {
		index = ti.Name
	}
	actions := make([]dsl.BulkAction, len(ids))
	for i, id := range ids {
		actions[i] = dsl.BulkAction{Op: "delete", ID: id}
	}
	items, err := a.bulk(ctx, index, actions)
	n := 0
	for _, it := range items {
		if it.Result == "deleted" {
			n++
		}
	}
	return n, err
}

// bulk sends one _bulk request to index and returns the items; the first
// failed item (other than a delete of a missing id) is the error. owned
// are the fields the sidecar wrote (the vector field): a document
// refused on one of them is the sidecar's fault, not the client's.
func (a *adapter) bulk(ctx context.Context, index string, actions []dsl.BulkAction, owned ...string) ([]dsl.BulkItemResult, error) {
	if len(actions) == 0 {
		return nil, nil
	}
	body, err := dsl.EncodeBulk(actions)
	if err != nil {
		return nil, fmt.Errorf("opensearch: encode bulk: %w", err)
	}
	path := "/" + url.PathEscape(index) + "/_bulk?refresh=" + refresh(a.cfg.Refresh)
	res, err := a.http.do(ctx, http.MethodPost, path, body, true)
	if err != nil {
		return nil, err
	}
	return bulkItems(res.Body, path, owned...)
}

func refresh(r string) string {
	if r == "" {
		return "wait_for"
	}
	return r
}

// bulkItems decodes a _bulk response and reports the first item error; a
// document past a mapping limit is the -32602 naming it.
func bulkItems(raw []byte, op string, owned ...string) ([]dsl.BulkItemResult, error) {
	var br dsl.BulkResponse
	if err := json.Unmarshal(raw, &br); err != nil {
		return nil, fmt.Errorf("opensearch: decode bulk: %w", err)
	}
	items := make([]dsl.BulkItemResult, len(br.Items))
	var first error
	for i, m := range br.Items {
		_, items[i] = dsl.Item(m)
		it := items[i]
		if it.Error == nil || first != nil {
			continue
		}
		first = &Error{Op: op + " item " + it.ID, Status: it.Status, Cause: it.Error,
			Field: eserrors.DocumentField(i, it.Error, owned...)}
		if setting, ok := dsl.MappingLimit(it.Error); ok {
			// items are in document order
			first = adapters.MappingLimitError(i, setting)
		}
	}
	return items, first
}
