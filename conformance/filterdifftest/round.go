package filterdifftest

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
)

// roundPlan says what one round generates.
type roundPlan struct {
	// multi makes the target an alias over two indices that disagree on
	// the conflict fields.
	multi bool
	// docs is the number of documents (over all indices).
	docs int
}

// plans are the rounds of one seed: two single indices of 200 documents
// and an alias over two indices of 120 (more than maxK, so retrieves page).
var plans = []roundPlan{{docs: 200}, {docs: 200}, {multi: true, docs: 240}}

// newGen returns the random source of round i of seed.
func newGen(seed uint64, i int) *gen {
	return &gen{r: rand.New(rand.NewPCG(seed, uint64(i)+1))}
}

// newRound generates the indices and documents of one round: a field of
// every kind feats allows, plus body, named prefix-<n>.
func newRound(g *gen, plan roundPlan, feats Feature, prefix string) *Round {
	g.feats = feats
	parts := []*part{bodyPart()}
	for _, k := range kindsFor(feats) {
		parts = append(parts, k.build(g, k.name))
	}
	r := &Round{Target: prefix}
	n := 1
	if plan.multi {
		n = 2
		r.Alias = true
		r.Target = prefix + "-all"
	}
	conflicts := conflictParts(g)
	for i := range n {
		name := prefix
		if plan.multi {
			name = fmt.Sprintf("%s-%c", prefix, 'a'+i)
		}
		ps := parts
		if plan.multi {
			ps = append(slices.Clone(parts), conflicts[i]...)
		}
		r.Indices = append(r.Indices, buildIndex(name, ps))
	}
	seen := map[string]bool{}
	for _, p := range parts {
		for _, nm := range p.names {
			if !seen[nm] {
				seen[nm] = true
				r.Names = append(r.Names, nm)
			}
		}
	}
	r.Names = append(r.Names, junkNames...)
	for d := range plan.docs {
		ix := d % n
		src := map[string]any{}
		ps := parts
		if plan.multi {
			ps = append(slices.Clone(parts), conflicts[ix]...)
		}
		for _, p := range ps {
			p.write(g, src)
		}
		r.Docs = append(r.Docs, &Doc{ID: fmt.Sprintf("%c%03d", 'a'+ix, d/n), Index: ix, Source: src})
	}
	return r
}

// buildIndex merges parts into one index.
func buildIndex(name string, parts []*part) *Index {
	props, runtime, derived := map[string]any{}, map[string]any{}, map[string]any{}
	ix := &Index{Name: name, Fields: map[string]*Field{}}
	for _, p := range parts {
		maps.Copy(props, p.props)
		maps.Copy(runtime, p.runtime)
		maps.Copy(derived, p.derived)
		for _, f := range p.fields {
			ix.Fields[f.Name] = f
		}
	}
	mappings := map[string]any{"dynamic": false, "properties": props}
	if len(runtime) > 0 {
		mappings["runtime"] = runtime
	}
	if len(derived) > 0 {
		mappings["derived"] = derived
	}
	ix.Body = map[string]any{"settings": indexSettings, "mappings": mappings}
	return ix
}

// junkNames are leaf names no index has.
var junkNames = []string{"no_such_field", "KW_PLAIN", "body.keyword", "kw_plain.raw"}

// conflictParts are the fields on which the two indices behind an alias
// disagree: cf_ia is a keyword with ignore_above 5 in one and 10 in the
// other; cf_type is a keyword in one and a long in the other.
func conflictParts(g *gen) [2][]*part {
	iaPool := append(append(g.sample(keywordWords, 6), g.sample(aroundLength(5), 4)...), g.sample(aroundLength(10), 4)...)
	ia := func(n int) *part {
		f := &Field{Name: "cf_ia", Kind: fmt.Sprintf("cf_ia(%d)", n), Class: ClassKeyword, IgnoreAbove: n, pool: iaPool}
		return scalar(f, map[string]any{"type": "keyword", "ignore_above": n})
	}
	kw := &Field{Name: "cf_type", Kind: "cf_type(keyword)", Class: ClassKeyword, pool: append(strs("12", "7", "-1", "x"), g.sample(keywordWords, 5)...)}
	long := &Field{Name: "cf_type", Kind: "cf_type(long)", Class: ClassInt, IntType: "long", Coerce: true, pool: nums("12", "7", "-1", "100", "0")}
	return [2][]*part{
		{ia(5), scalar(kw, map[string]any{"type": "keyword"})},
		{ia(10), scalar(long, map[string]any{"type": "long"})},
	}
}

// bulkBody renders the documents of r as a _bulk request.
func (r *Round) bulkBody() ([]byte, error) {
	var out []byte
	for _, d := range r.Docs {
		action, err := json.Marshal(map[string]any{"index": map[string]any{"_index": r.Indices[d.Index].Name, "_id": d.ID}})
		if err != nil {
			return nil, err
		}
		src, err := json.Marshal(d.Source)
		if err != nil {
			return nil, fmt.Errorf("document %s: %w", d.ID, err)
		}
		out = append(append(append(append(out, action...), '\n'), src...), '\n')
	}
	return out, nil
}
