package elasticsearch

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

// maxIDBytes is the _id limit of Elasticsearch.
const maxIDBytes = 512

// Upsert implements adapters.Writer with one _bulk of `index` actions:
// create-or-replace by id, so repeating a call is idempotent (§7.10).
//
// Under index isolation the documents go to the caller's tenant's index
// (adapters.TenantFrom), which is created from the configured body first
// if need be.
func (a *adapter) Upsert(ctx context.Context, docs []adapters.Document) error {
	st, err := a.writableState()
	if err != nil {
		return err
	}
	index := a.cfg.Index
	if ti, tst, ok, err := a.tenants.Write(ctx, true); err != nil {
		return err
	} else if ok {
		index, st = ti.Name, tst
	}
	actions := make([]dsl.BulkAction, len(docs))
	for i, d := range docs {
		if err := checkID(d.ID, fmt.Sprintf("documents[%d].id", i)); err != nil {
			return err
		}
		actions[i] = dsl.BulkAction{Op: "index", ID: d.ID, Doc: a.source(st, d)}
	}
	_, err = a.bulk(ctx, index, actions, adapters.VectorFieldsOf(docs, writtenVector(st, adapters.Document{}))...)
	return err
}

// Delete implements adapters.Writer. It counts only items ES reports as
// "deleted"; "not_found" is not an error and not counted (§7.11). Under
// index isolation it deletes in the caller's tenant's index, and nothing
// when that index does not exist yet.
func (a *adapter) Delete(ctx context.Context, ids []string) (int, error) {
	if _, err := a.writableState(); err != nil {
		return 0, err
	}
	index := a.cfg.Index
	if ti, st, ok, err := a.tenants.Write(ctx, false); err != nil {
		return 0, err
	} else if ok && st == nil {
		return 0, nil
	} else if ok {
		index = ti.Name
	}
	actions := make([]dsl.BulkAction, len(ids))
	for i, id := range ids {
		if err := checkID(id, fmt.Sprintf("ids[%d]", i)); err != nil {
			return 0, err
		}
		actions[i] = dsl.BulkAction{Op: "delete", ID: id}
	}
	res, err := a.bulk(ctx, index, actions)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, it := range res.Items {
		if _, r := dsl.Item(it); r.Result == "deleted" {
			n++
		}
	}
	return n, nil
}

func (a *adapter) writableState() (*probeState, error) {
	st, err := a.probed()
	if err != nil {
		return nil, err
	}
	if !st.ev.Writable {
		return nil, rcp.NewError(rcp.CodeCapabilityMissing, "index is not writable")
	}
	return st, nil
}

// checkID guards the 512-byte _id limit (the Engine checks too).
func checkID(id, field string) error {
	if id == "" || len(id) > maxIDBytes {
		return rcp.InvalidParams(field, "id must be 1..%d bytes", maxIDBytes)
	}
	return nil
}

// source builds the stored document: meta keys, the content field and the
// vector field.
func (a *adapter) source(st *probeState, d adapters.Document) map[string]any {
	doc := make(map[string]any, len(d.Meta)+2)
	for k, v := range d.Meta {
		doc[k] = v
	}
	if st.content != "" && d.Text != "" {
		doc[st.content] = d.Text
	}
	if vf := writtenVector(st, d); len(d.Vector) > 0 && vf != "" {
		doc[vf] = d.Vector
	}
	return doc
}

// writtenVector is the field d's vector is written to: the one the
// Engine names, else the first vector field; "" when there is none.
func writtenVector(st *probeState, d adapters.Document) string {
	if d.VectorField != "" {
		return d.VectorField
	}
	if len(st.ev.VectorFields) == 0 {
		return ""
	}
	return st.ev.VectorFields[0].Name
}

// bulk sends actions to index and fails when any item failed (no partial
// success is reported as success).
func (a *adapter) bulk(ctx context.Context, index string, actions []dsl.BulkAction, owned ...string) (*dsl.BulkResponse, error) {
	body, err := dsl.EncodeBulk(actions)
	if err != nil {
		return nil, err
	}
	path := "/" + url.PathEscape(index) + "/_bulk?refresh=" + url.QueryEscape(a.refresh())
	res, err := a.do(ctx, http.MethodPost, path, body, true)
	if err != nil {
		return nil, err
	}
	var br dsl.BulkResponse
	if err := json.Unmarshal(res.Body, &br); err != nil {
		return nil, fmt.Errorf("elasticsearch: decode bulk: %w", err)
	}
	return &br, itemError(&br, owned...)
}

func (a *adapter) refresh() string {
	if a.cfg.Refresh == "" {
		return "wait_for"
	}
	return a.cfg.Refresh
}

// itemError returns the first failed item as *Error, or, when the item's
// document would grow the mapping past a limit, as the -32602 naming it
// (items are in document order). A document the mapping refuses is the
// client's (documents[i].meta) unless the refused field is one of owned,
// which the sidecar wrote.
func itemError(br *dsl.BulkResponse, owned ...string) error {
	if !br.Errors {
		return nil
	}
	for i, it := range br.Items {
		op, r := dsl.Item(it)
		if r.Error == nil {
			continue
		}
		if setting, ok := dsl.MappingLimit(r.Error); ok {
			return adapters.MappingLimitError(i, setting)
		}
		return &Error{Op: "bulk " + op + " " + r.ID, Status: r.Status, Cause: r.Error,
			Field: eserrors.DocumentField(i, r.Error, owned...)}
	}
	return nil
}
