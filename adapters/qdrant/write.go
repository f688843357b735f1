package qdrant

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"math"

	qdrantgo "github.com/qdrant/go-client/qdrant"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
)

// idNamespace is the fixed UUIDv5 namespace of RCP document ids. Changing
// it orphans every point written before.
var idNamespace = [16]byte{0x6b, 0x1e, 0x5c, 0x0e, 0x6a, 0x43, 0x4f, 0x3e, 0x9a, 0x57, 0x52, 0x43, 0x50, 0x2d, 0x69, 0x64}

// PointID returns the Qdrant point id (UUIDv5 over a fixed namespace) of an
// RCP document id. Every id is hashed, so "42" never collides with point 42.
func PointID(id string) string {
	h := sha1.New()
	h.Write(idNamespace[:])
	h.Write([]byte(id))
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = (u[6] & 0x0f) | 0x50 // version 5
	u[8] = (u[8] & 0x3f) | 0x80 // RFC 4122 variant
	b := hex.EncodeToString(u[:])
	return b[0:8] + "-" + b[8:12] + "-" + b[12:16] + "-" + b[16:20] + "-" + b[20:]
}

// Upsert implements adapters.Writer: replaces points by id and waits for
// the write (read-after-write), so re-adding an id is idempotent.
func (a *adapter) Upsert(ctx context.Context, docs []adapters.Document) error {
	if err := a.live(); err != nil {
		return err
	}
	f := a.snapshot()
	if f.collection == "" {
		return errNotProbed
	}
	points := make([]*qdrantgo.PointStruct, len(docs))
	for i, d := range docs {
		p, err := a.point(&f, d)
		if err != nil {
			return err
		}
		points[i] = p
	}
	wait := true
	_, err := a.client.Upsert(ctx, &qdrantgo.UpsertPoints{CollectionName: f.collection, Wait: &wait, Points: points})
	if err != nil {
		return opErr("upsert", err)
	}
	return nil
}

// point builds one point: payload = meta + text + original id; vectors =
// the dense vector (from the Engine's embedder) and, when sparse retrieval
// is proven, a BM25 Document the server turns into the sparse vector.
func (a *adapter) point(f *facts, d adapters.Document) (*qdrantgo.PointStruct, error) {
	meta := make(map[string]any, len(d.Meta)+2)
	for k, v := range d.Meta {
		meta[k] = integral(v, k, f.floats)
	}
	meta[idKey], meta[a.cfg.textField()] = d.ID, d.Text
	payload, err := qdrantgo.TryValueMap(meta)
	if err != nil {
		return nil, fmt.Errorf("qdrant: payload of %q: %w", d.ID, err)
	}
	vecs := map[string]*qdrantgo.Vector{}
	if d.Vector != nil {
		vecs[a.cfg.Vector] = qdrantgo.NewVectorDense(d.Vector)
	}
	if f.sparse {
		vecs[a.cfg.SparseVector] = qdrantgo.NewVectorDocument(&qdrantgo.Document{Text: d.Text, Model: a.cfg.SparseModel})
	}
	p := &qdrantgo.PointStruct{Id: qdrantgo.NewIDUUID(PointID(d.ID)), Payload: payload}
	switch {
	case len(vecs) == 1 && a.cfg.Vector == "" && d.Vector != nil:
		p.Vectors = qdrantgo.NewVectorsDense(d.Vector)
	default:
		p.Vectors = qdrantgo.NewVectorsMap(vecs)
	}
	return p, nil
}

// Delete implements adapters.Writer. Qdrant's delete reports no count, so
// the points that exist are fetched first and only they are counted.
func (a *adapter) Delete(ctx context.Context, ids []string) (int, error) {
	if err := a.live(); err != nil {
		return 0, err
	}
	f := a.snapshot()
	if f.collection == "" {
		return 0, errNotProbed
	}
	pids := pointIDs(ids)
	if len(pids) == 0 {
		return 0, nil
	}
	found, err := a.client.Get(ctx, &qdrantgo.GetPoints{CollectionName: f.collection, Ids: pids,
		WithPayload: qdrantgo.NewWithPayload(false), WithVectors: qdrantgo.NewWithVectors(false)})
	if err != nil {
		return 0, opErr("get", err)
	}
	if len(found) == 0 {
		return 0, nil
	}
	wait := true
	existing := make([]*qdrantgo.PointId, len(found))
	for i, p := range found {
		existing[i] = p.GetId()
	}
	_, err = a.client.Delete(ctx, &qdrantgo.DeletePoints{CollectionName: f.collection, Wait: &wait,
		Points: qdrantgo.NewPointsSelectorIDs(existing)})
	if err != nil {
		return 0, opErr("delete", err)
	}
	return len(found), nil
}

// pointIDs maps RCP ids to distinct point ids, in first-seen order.
func pointIDs(ids []string) []*qdrantgo.PointId {
	seen := make(map[string]bool, len(ids))
	out := make([]*qdrantgo.PointId, 0, len(ids))
	for _, id := range ids {
		pid := PointID(id)
		if !seen[pid] {
			seen[pid] = true
			out = append(out, qdrantgo.NewIDUUID(pid))
		}
	}
	return out
}

// integral turns whole JSON numbers (decoded as float64) into int64, so an
// integer payload index and match:{integer} see integers as Qdrant stores
// them; values of fields indexed as Float (by dotted name, through objects
// and arrays) keep their float values.
func integral(v any, path string, floats map[string]bool) any {
	switch x := v.(type) {
	case float64:
		if !floats[path] && x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = integral(e, path, floats)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = integral(e, path+"."+k, floats)
		}
		return out
	}
	return v
}
