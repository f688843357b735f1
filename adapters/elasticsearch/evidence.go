package elasticsearch

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dslfilter"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
)

// buildState turns probe facts and mappings into Evidence plus the
// private state Plan and decode use.
func (a *adapter) buildState(f *facts, per map[string]map[string]field, notes []string, filters *dslfilter.Fields) *probeState {
	fields, conflicts := mergeFields(per)
	ev := &capability.Evidence{
		Engine: Name, Version: f.version, Target: a.cfg.Index,
		Pagination: true,
		Notes:      append(slices.Clone(notes), conflicts...),
	}
	st := &probeState{ev: ev, fields: fields, native: map[string]string{}, filters: filters.Plan, vectors: map[string]field{},
		vindex: vectorIndexes(per, f)}
	ev.TextFields = a.textFields(fields, ev)
	st.content = a.contentField(fields, ev.TextFields)
	ev.VectorFields = a.vectorFields(knnFields(f, fields, ev), st, ev)
	applyReranker(f, st)
	if atLeast(f.version, [2]int{9, 0}) && len(st.vectors) > 0 {
		// 9.x omits vectors from _source by default; sidecar MMR and
		// includeVectors need them.
		st.vectorsOptIn = true
		ev.Notes = append(ev.Notes, "vector fields are left out of _source by default (9.x); searches that need them ask with _source.exclude_vectors: false")
	}
	ev.FilterFields = filters.Filter
	ev.Notes = append(ev.Notes, filters.Notes...)
	for name, plan := range filters.Plan {
		st.native[name] = plan.Name
	}
	ev.TitleField = pick(a.cfg.TitleField, fields, "title", "name")
	ev.URIField = pick(a.cfg.URIField, fields, "url", "uri", "link")
	ev.NativeRRF = nativeRRF(f, ev)
	ev.Notes = append(ev.Notes, unusedFieldNotes(fields)...)
	ev.Writable = a.writable(per, ev)
	ev.TenantIndices = a.tenancy != nil
	ev.MappedFields = mappedFields(per)
	if st.content != "" {
		ev.ReservedFields = []string{st.content}
	}
	a.featureEvidence(fields, st)
	ev.Notes = append(ev.Notes, fmt.Sprintf("elasticsearch %s (%s), licence %q, %d node(s), modules %s",
		f.version, f.flavor, f.licence, f.nodes, strings.Join(f.modules, ",")))
	return st
}

// knnSince is the first version whose search request takes a knn section,
// the only way the adapter runs a kNN search.
var knnSince = [2]int{8, 4}

// knnFields returns fields without its dense_vector fields, each with a
// note, when the engine has no knn search section (7.x, whose
// dense_vector is for scripts only, and 8.0–8.3); else fields.
func knnFields(f *facts, fields map[string]field, ev *capability.Evidence) map[string]field {
	if f.flavor == "serverless" || atLeast(f.version, knnSince) {
		return fields
	}
	out := make(map[string]field, len(fields))
	for _, name := range sortedKeys(fields) {
		if fields[name].Type == "dense_vector" {
			ev.Notes = append(ev.Notes, fmt.Sprintf("vector field %s: elasticsearch %s has no knn search section (%d.%d+); not offered", name, f.version, knnSince[0], knnSince[1]))
			continue
		}
		out[name] = fields[name]
	}
	return out
}

// textFields returns the configured BM25 fields that exist and are
// searchable, or every top-level searchable text field by default.
func (a *adapter) textFields(fields map[string]field, ev *capability.Evidence) []capability.TextField {
	var out []capability.TextField
	if len(a.cfg.TextFields) > 0 {
		for _, c := range a.cfg.TextFields {
			if f, ok := fields[c.Name]; ok && isText(f) {
				out = append(out, capability.TextField{Name: c.Name, Boost: c.Boost})
				continue
			}
			ev.Notes = append(ev.Notes, fmt.Sprintf("configured text field %s is not a searchable text field; ignored", c.Name))
		}
		return out
	}
	for _, name := range sortedKeys(fields) {
		if f := fields[name]; isText(f) && !f.IsSub {
			out = append(out, capability.TextField{Name: name})
		}
	}
	return out
}

func isText(f field) bool {
	return (f.Type == "text" || f.Type == "match_only_text") && f.Indexed
}

// contentField picks the field that supplies Hit.text.
func (a *adapter) contentField(fields map[string]field, text []capability.TextField) string {
	if a.cfg.ContentField != "" {
		return a.cfg.ContentField
	}
	for _, n := range []string{"text", "content", "body"} {
		if f, ok := fields[n]; ok && isText(f) {
			return n
		}
	}
	if len(text) > 0 {
		return text[0].Name
	}
	return ""
}

// vectorFields lists usable dense_vector fields (the configured one
// first), each with its element type: float, or byte (int8, served only
// to an int8 embedder: capability.DenseField). Non-indexed and bit
// vectors are reported and left out: kNN needs an index, and no embedder
// of the sidecar produces packed bits.
func (a *adapter) vectorFields(fields map[string]field, st *probeState, ev *capability.Evidence) []capability.VectorField {
	var out []capability.VectorField
	for _, name := range sortedKeys(fields) {
		f := fields[name]
		if f.Type != "dense_vector" {
			continue
		}
		el, ok := elementOf(f.Element)
		if !f.Indexed || !ok || f.Dims == 0 {
			ev.Notes = append(ev.Notes, fmt.Sprintf("vector field %s (index=%t, element_type=%s, dims=%d) cannot serve kNN here%s; not offered", name, f.Indexed, f.Element, f.Dims, unservedWhy(f.Element, ok)))
			continue
		}
		st.vectors[name] = f
		vf := capability.VectorField{Name: name, Dims: f.Dims, Similarity: similarity(f.Similarity), Element: el, Indexed: true,
			Detail: map[string]string{"element_type": f.Element, "similarity": f.Similarity}}
		if note := describeVectorIndex(&vf, st.vindex[name], ev.Version); note != "" {
			ev.Notes = append(ev.Notes, note)
		}
		if name == a.cfg.VectorField {
			out = append([]capability.VectorField{vf}, out...)
		} else if a.cfg.VectorField == "" {
			out = append(out, vf)
		}
	}
	return out
}

// elementOf maps a dense_vector element_type to the vector element an
// embedder must produce; ok is false for bit (packed binary) and unknown
// types, which no embedder of the sidecar produces.
func elementOf(elementType string) (capability.Element, bool) {
	switch elementType {
	case "float":
		return capability.ElementFloat, true
	case "byte":
		return capability.ElementInt8, true
	}
	return "", false
}

// unservedWhy explains an element type no embedder can serve ("" for
// one that can).
func unservedWhy(elementType string, known bool) string {
	switch {
	case known:
		return ""
	case elementType == "bit":
		return fmt.Sprintf(": element_type bit needs %s (packed bit) query vectors and the sidecar's embedders produce only float or int8 (embedder.element_type)", capability.ElementBinary)
	}
	return fmt.Sprintf(": element_type %s is not known to the sidecar", elementType)
}

// similarity names the native similarity the adapter reports after
// inverting _score (dot_product on unit vectors is a dot product).
func similarity(es string) capability.Similarity {
	switch es {
	case "cosine":
		return capability.SimCosine
	case "dot_product", "max_inner_product":
		return capability.SimDot
	}
	return capability.SimL2
}

// pick returns the configured field, or the first candidate mapped.
func pick(configured string, fields map[string]field, candidates ...string) string {
	if configured != "" {
		return configured
	}
	for _, c := range candidates {
		if _, ok := fields[c]; ok {
			return c
		}
	}
	return ""
}

// nativeRRF holds only when every node has rank-rrf and the licence
// allows the rrf retriever (enterprise; trial passes every gate).
func nativeRRF(f *facts, ev *capability.Evidence) bool {
	hasModule := slices.Contains(f.modules, "rank-rrf")
	licensed := f.licence == "enterprise" || f.licence == "trial"
	if !hasModule || !licensed {
		ev.Notes = append(ev.Notes, fmt.Sprintf("native rrf unavailable (rank-rrf module=%t, licence %q); the sidecar fuses", hasModule, f.licence))
	}
	return hasModule && licensed
}

// writable holds when the config opts in and writes have one target:
// the configured index, or under index isolation the tenant's own.
func (a *adapter) writable(per map[string]map[string]field, ev *capability.Evidence) bool {
	if !a.cfg.Writable {
		return false
	}
	if a.tenancy != nil {
		return true
	}
	if strings.ContainsAny(a.cfg.Index, "*,") || len(per) != 1 {
		ev.Notes = append(ev.Notes, fmt.Sprintf("target %s resolves to %d indices; writes need exactly one", a.cfg.Index, len(per)))
		return false
	}
	return true
}

// mappedFields lists the leaf fields of every index behind the target
// (multi-fields excluded): what a write can add to without growing the
// mapping. Fields under nested objects are left out, so writing them
// counts as new.
func mappedFields(per map[string]map[string]field) []string {
	out := []string{}
	for _, fs := range per {
		for name, f := range fs {
			if !f.IsSub {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// unusedFieldNotes names fields whose retrieval needs engine-side
// inference or sparse vectors, which this adapter does not use.
func unusedFieldNotes(fields map[string]field) []string {
	var notes []string
	for _, name := range sortedKeys(fields) {
		switch f := fields[name]; f.Type {
		case "semantic_text":
			notes = append(notes, fmt.Sprintf("semantic_text field %s (inference_id %q) is not searched: engine-side inference is not used", name, f.Inference))
		case "sparse_vector", "rank_features":
			notes = append(notes, fmt.Sprintf("%s field %s is not searched by this adapter", f.Type, name))
		}
	}
	return notes
}
