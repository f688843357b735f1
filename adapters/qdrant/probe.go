package qdrant

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	qdrantgo "github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/mapping"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// version is a Qdrant server version (major, minor, patch).
type version [3]int

// Feature gates (docs/engines.md §4.1).
var (
	minSupported = version{1, 10, 0} // Query API, prefetch, Fusion.RRF
	minMMR       = version{1, 15, 0} // nearest_with_mmr
	minBM25      = version{1, 15, 2} // Document{model: "qdrant/bm25"}
	minRrfK      = version{1, 16, 0} // Rrf{k}
)

// atLeast reports whether v ≥ w.
func (v version) atLeast(w version) bool {
	for i := range v {
		if v[i] != w[i] {
			return v[i] > w[i]
		}
	}
	return true
}

// parseVersion reads "1.16.2" (a "-suffix" or "v" prefix is ignored).
func parseVersion(s string) (version, error) {
	var v version
	core, _, _ := strings.Cut(strings.TrimPrefix(s, "v"), "-")
	parts := strings.Split(core, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return v, fmt.Errorf("qdrant: unparsable server version %q", s)
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return v, fmt.Errorf("qdrant: unparsable server version %q", s)
		}
		v[i] = n
	}
	return v, nil
}

// facts are what Plan and Search need from the probe.
type facts struct {
	version    version
	collection string // resolved name (the alias target when Collection is an alias)
	dense      *denseFact
	sparse     bool            // BM25 Document inference on cfg.SparseVector is proven
	floats     map[string]bool // payload fields indexed as Float
	rrfK       bool            // Rrf{k} is settable (≥ 1.16)
	mmr        bool            // nearest_with_mmr (≥ 1.15)
}

// denseFact is the configured dense vector.
type denseFact struct {
	dims     int
	distance qdrantgo.Distance
}

// Probe implements adapters.Adapter: version, alias, collection info.
func (a *adapter) Probe(ctx context.Context) (*capability.Evidence, error) {
	if err := a.live(); err != nil {
		return nil, err
	}
	hc, err := a.client.HealthCheck(ctx)
	if err != nil {
		return nil, opErr("health check", err)
	}
	v, err := parseVersion(hc.GetVersion())
	if err != nil {
		return nil, err
	}
	if !v.atLeast(minSupported) {
		return nil, fmt.Errorf("qdrant: server %s is older than 1.10 (no Query API)", hc.GetVersion())
	}
	ev := &capability.Evidence{Engine: Name, Version: hc.GetVersion(), Target: a.cfg.Collection, Pagination: true,
		ReservedFields: []string{idKey, a.cfg.textField()}}
	f := facts{version: v, rrfK: v.atLeast(minRrfK), mmr: v.atLeast(minMMR)}
	if f.collection, err = a.resolveAlias(ctx, ev); err != nil {
		return nil, err
	}
	info, err := a.client.GetCollectionInfo(ctx, f.collection)
	if err != nil {
		return nil, opErr("collection info", err)
	}
	raw, err := protojson.Marshal(info)
	if err != nil {
		return nil, fmt.Errorf("qdrant: collection info: %w", err)
	}
	m, err := mapping.ReadQdrant(f.collection, raw)
	if err != nil {
		return nil, fmt.Errorf("qdrant: %w", err)
	}
	a.fill(ev, &f, info, &m.Indices[0])
	a.mu.Lock()
	a.facts = f
	a.mu.Unlock()
	return ev, nil
}

// resolveAlias returns the collection behind cfg.Collection when it is an
// alias (Qdrant resolves aliases itself; the probe records the target).
func (a *adapter) resolveAlias(ctx context.Context, ev *capability.Evidence) (string, error) {
	aliases, err := a.client.ListAliases(ctx)
	if err != nil {
		return "", opErr("list aliases", err)
	}
	for _, al := range aliases {
		if al.GetAliasName() == a.cfg.Collection {
			ev.Notes = append(ev.Notes, fmt.Sprintf("alias %q resolves to collection %q", al.GetAliasName(), al.GetCollectionName()))
			return al.GetCollectionName(), nil
		}
	}
	return a.cfg.Collection, nil
}

// fill turns collection info, read into the mapping model as col, into
// evidence and facts.
func (a *adapter) fill(ev *capability.Evidence, f *facts, info *qdrantgo.CollectionInfo, col *mapping.Index) {
	f.dense = a.denseVector(ev, col.Vectors)
	f.sparse = a.sparseVector(ev, f.version, col.Vectors)
	var notes []string
	ev.FilterFields, notes = filterFields(col.Fields)
	ev.Notes = append(ev.Notes, notes...)
	f.floats = map[string]bool{}
	for _, ff := range ev.FilterFields {
		f.floats[ff.Name] = ff.Type == filterlang.TypeFloat
	}
	ev.DocCount = int64(info.GetPointsCount())
	ev.TitleField, ev.URIField = a.cfg.TitleField, a.cfg.URIField
	ev.Writable = a.cfg.Writable
	ev.NativeMMR = f.mmr && f.dense != nil
	if ev.NativeMMR {
		ev.Notes = append(ev.Notes, fmt.Sprintf("native MMR (diversity = 1 − lambda): the nearest first, then λ·sim(q,d) − (1−λ)·max sim(d,s) "+
			"with %s's raw similarity %s, unnormalised", f.dense.distance, rawSimilarity[f.dense.distance]))
	}
	ev.NativeRRF = f.dense != nil && f.sparse
	if ev.NativeRRF && !f.rrfK {
		ev.NativeRRFKs = []int{1} // 1.15: fixed k=2 is RCP rrfK=1 only
		ev.Notes = append(ev.Notes, fmt.Sprintf("Qdrant %s fixes RRF k=2 (RCP rrfK=1); other rrfK values are fused in the sidecar", ev.Version))
	}
	if limit := info.GetConfig().GetStrictModeConfig().GetMaxQueryLimit(); limit > 0 {
		ev.Notes = append(ev.Notes, fmt.Sprintf("strict mode caps limit at %d; set policy maxK ≤ %d", limit, limit))
	}
}

// denseVector finds the configured dense vector among the collection's
// vectors; nil (with a note) when it is absent or a multivector.
func (a *adapter) denseVector(ev *capability.Evidence, vectors []mapping.Field) *denseFact {
	name := a.cfg.Vector
	var p *mapping.Vector
	var named []string
	unnamed := false
	for _, v := range vectors {
		if v.Type != "dense_vector" {
			continue
		}
		if v.Path == "" {
			unnamed = true
		} else {
			named = append(named, v.Path)
		}
		if v.Path == name {
			p = v.Vector
		}
	}
	if !unnamed && len(named) > 0 {
		ev.Notes = append(ev.Notes, "named vectors: "+strings.Join(named, ", "))
	}
	if p == nil {
		ev.Notes = append(ev.Notes, fmt.Sprintf("configured vector %q does not exist", name))
		return nil
	}
	distance := qdrantgo.Distance(qdrantgo.Distance_value[p.Similarity])
	sim, ok := similarity(distance)
	if !ok {
		ev.Notes = append(ev.Notes, fmt.Sprintf("vector %q has unknown distance %v", name, p.Similarity))
		return nil
	}
	datatype := p.Element
	if datatype == "" {
		datatype = qdrantgo.Datatype_Default.String() // the zero value, left out of the info
	}
	detail := map[string]string{"distance": distance.String(), "datatype": datatype}
	if p.Multivector != "" {
		ev.Notes = append(ev.Notes, fmt.Sprintf("vector %q is a multivector (%s); single-vector dense retrieval is not offered", name, p.Multivector))
		return nil
	}
	ev.VectorFields = []capability.VectorField{{Name: name, Dims: p.Dims, Similarity: sim, Indexed: true, Detail: detail}}
	return &denseFact{dims: p.Dims, distance: distance}
}

// rawSimilarity is the similarity Qdrant's MMR compares per distance
// (never post-processed into a distance).
var rawSimilarity = map[qdrantgo.Distance]string{
	qdrantgo.Distance_Cosine: "cos(a,b)", qdrantgo.Distance_Dot: "a·b",
	qdrantgo.Distance_Euclid: "−Σ(a−b)²", qdrantgo.Distance_Manhattan: "−Σ|a−b|",
}

func similarity(d qdrantgo.Distance) (capability.Similarity, bool) {
	switch d {
	case qdrantgo.Distance_Cosine:
		return capability.SimCosine, true
	case qdrantgo.Distance_Dot:
		return capability.SimDot, true
	case qdrantgo.Distance_Euclid:
		return capability.SimL2, true
	case qdrantgo.Distance_Manhattan:
		return capability.SimManhattan, true
	}
	return "", false
}

// sparseVector proves BM25 inference on the configured sparse vector: it
// must exist with the IDF modifier, the model must be configured and the
// server must run it (≥ 1.15.2). Sparse is then searchable "text".
func (a *adapter) sparseVector(ev *capability.Evidence, v version, vectors []mapping.Field) bool {
	if a.cfg.SparseVector == "" {
		return false
	}
	i := slices.IndexFunc(vectors, func(f mapping.Field) bool { return f.Type == "sparse_vector" && f.Path == a.cfg.SparseVector })
	var why string
	switch {
	case i < 0:
		why = "does not exist"
	case vectors[i].Vector.Modifier != "idf":
		why = "has no IDF modifier, so qdrant/bm25 queries would not score as BM25"
	case !v.atLeast(minBM25):
		why = "needs Qdrant ≥ 1.15.2 for qdrant/bm25 inference"
	}
	if why != "" {
		ev.Notes = append(ev.Notes, fmt.Sprintf("sparse vector %q %s; sparse retrieval is not offered", a.cfg.SparseVector, why))
		return false
	}
	ev.TextFields = []capability.TextField{{Name: a.cfg.textField()}}
	ev.Notes = append(ev.Notes, fmt.Sprintf("sparse retrieval: %s inference of payload %q into sparse vector %q "+
		"(lower-cased, English Snowball stems, English stop words dropped; a stop-word-only query finds nothing)",
		ModelBM25, a.cfg.textField(), a.cfg.SparseVector))
	return true
}

// filterFields maps the collection's payload indexes (the mapping
// model's fields) to §8 fields (docs/engines.md §4.1). An index key is a
// Qdrant JSON path ("a.b", "a[].b", `"a.b"`); the §8 field is its dotted
// name ("a.b" for all three: the model's Path), whose elements a filter
// reads at every path (filter.go paths). Keys naming the same field must
// agree on its type; a name of more than maxPathSegments segments is not
// offered. Notes say what was left out and what date fields accept.
func filterFields(fields []mapping.Field) ([]capability.FilterField, []string) {
	byName := map[string]capability.FilterField{}
	var notes []string
	clash := map[string]bool{}
	for _, pf := range fields {
		ff, ok := filterField(pf.Type)
		if !ok {
			continue
		}
		key, name := pf.Key, pf.Path
		if key == "" {
			key = name
		}
		var err error
		if pf.Problem != "" {
			err = errors.New(pf.Problem)
		} else if len(strings.Split(name, ".")) > maxPathSegments {
			err = fmt.Errorf("more than %d segments", maxPathSegments)
		}
		if err != nil {
			notes = append(notes, fmt.Sprintf("filter field %q not offered: %v", key, err))
			continue
		}
		ff.Name = name
		if prev, ok := byName[name]; ok && prev.Type != ff.Type {
			clash[name] = true
		}
		byName[name] = ff
	}
	var out []capability.FilterField
	for _, name := range sortedKeys(byName) {
		if clash[name] {
			notes = append(notes, fmt.Sprintf("filter field %q not offered: its payload indexes disagree on the type", name))
			continue
		}
		out = append(out, byName[name])
		if byName[name].Type == filterlang.TypeDate {
			notes = append(notes, fmt.Sprintf("date field %q: Qdrant reads RFC 3339, ISO 8601 without a zone (as UTC), "+
				"\"YYYY-MM-DD HH:MM[:SS]\" and calendar dates (midnight UTC); numbers are not dates; instants are kept "+
				"to the microsecond", name))
		}
	}
	return out, notes
}

// filterField maps a payload index type (as the mapping model names it)
// to a §8 field type; ok is false for types that are no filter material.
func filterField(dataType string) (capability.FilterField, bool) {
	var ff capability.FilterField
	switch dataType {
	case "keyword", "uuid":
		ff.Type = filterlang.TypeKeyword
	case "integer":
		ff.Type = filterlang.TypeInt
	case "float":
		// Payload numbers are JSON doubles, compared as they are.
		ff.Type = filterlang.TypeFloat
		ff.Precision = rcp.FieldPrecision{Stored: rcp.PrecisionDouble}
	case "bool":
		ff.Type = filterlang.TypeBool
	case "datetime":
		ff.Type = filterlang.TypeDate
	case "geo":
		ff.Type = filterlang.TypeGeo
	case "text":
		// A full-text index matches tokens, never RCP's case-sensitive
		// substring: contains is withheld; equality is exact on payload.
		ff.Type = filterlang.TypeText
		ff.Ops = []filterlang.Op{filterlang.OpEq, filterlang.OpNe, filterlang.OpIn, filterlang.OpNin, filterlang.OpExists}
	default:
		return ff, false
	}
	return ff, true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
