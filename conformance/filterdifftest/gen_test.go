package filterdifftest

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"testing"
)

// engineFeatures are the feature sets the live tests declare.
var engineFeatures = map[string]Feature{
	"elasticsearch": FeatureFlattened | FeatureRuntime | FeatureEpochFractionNumbers | FeatureNegativeEpochMillis,
	"opensearch": FeatureMapperExtras | FeatureWildcard | FeatureConstantKeyword | FeatureUnsignedLong |
		FeatureFlatObject | FeatureDerived | FeatureEpochFractionNumbers | FeatureNegativeEpochMillis,
}

// TestRounds: every kind yields documents the oracle can read, a seed
// reproduces a round byte for byte, and each field is present in some
// documents and absent from others.
func TestRounds(t *testing.T) {
	for engine, feats := range engineFeatures {
		for i, plan := range plans {
			r := newRound(newGen(7, i), plan, feats, "x")
			if err := r.prepare(); err != nil {
				t.Fatalf("%s round %d: %v", engine, i, err)
			}
			b1, err := r.bulkBody()
			if err != nil {
				t.Fatal(err)
			}
			b2, _ := newRound(newGen(7, i), plan, feats, "x").bulkBody()
			if !bytes.Equal(b1, b2) {
				t.Errorf("%s round %d: the same seed generated different documents", engine, i)
			}
			if b3, _ := newRound(newGen(8, i), plan, feats, "x").bulkBody(); bytes.Equal(b1, b3) {
				t.Errorf("%s round %d: another seed generated the same documents", engine, i)
			}
			for _, name := range r.fieldNames() {
				present, absent := 0, 0
				for _, d := range r.Docs {
					if len(d.vals[name]) > 0 {
						present++
					} else if r.Indices[d.Index].Fields[name] != nil {
						absent++
					}
				}
				if present == 0 || (absent == 0 && name != bodyField) {
					t.Errorf("%s round %d: field %s present in %d documents, absent from %d", engine, i, name, present, absent)
				}
			}
			for _, k := range kindsFor(feats) {
				if !slices.ContainsFunc(r.fieldNames(), func(n string) bool { return r.specs(n)[0].Kind == k.name }) {
					t.Errorf("%s round %d: kind %s made no field", engine, i, k.name)
				}
			}
		}
	}
}

// TestFilterGen: generated values fit their fields, trees stay within
// depth 3, and the oracle judges every tree.
func TestFilterGen(t *testing.T) {
	r := newRound(newGen(3, 0), plans[2], engineFeatures["opensearch"], "x")
	if err := r.prepare(); err != nil {
		t.Fatal(err)
	}
	var pairs [][2]string
	for _, name := range r.fieldNames() {
		specs := r.specs(name)
		if slices.ContainsFunc(specs, func(f *Field) bool { return f.Class != specs[0].Class }) {
			continue // the keyword/long conflict is never advertised
		}
		for _, op := range opsByClass[specs[0].Class] {
			pairs = append(pairs, [2]string{name, op})
		}
	}
	fg := newFilterGen(newGen(3, 1), r, pairs)
	var depth func(n *Node) int
	depth = func(n *Node) int {
		d := 0
		for _, c := range n.children() {
			d = max(d, depth(c))
		}
		return d + 1
	}
	selected, refusable := 0, 0
	for range 2000 {
		n := fg.tree(1)
		if d := depth(n); d > 3 {
			t.Fatalf("depth %d: %s", d, n)
		}
		for _, l := range n.Leaves() {
			if l.Op == "exists" {
				continue
			}
			for _, v := range l.values() {
				for _, f := range r.specs(l.Field) {
					if _, err := FilterValue(f, v); err != nil {
						t.Fatalf("%s: %v", l, err)
					}
				}
			}
			if r.Refusable(l) != "" {
				refusable++
			}
		}
		ids, err := r.Expected(n)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if len(ids) > 0 && len(ids) < len(r.Docs) {
			selected++
		}
	}
	// Most trees should select some documents but not all of them.
	if selected < 1000 || refusable == 0 {
		t.Errorf("%d of 2000 trees select a proper subset, %d refusable leaves", selected, refusable)
	}
}

// TestSignedZeros: on every float kind, some documents hold -0.0 (as
// written, not as the integer -0) and others +0, and the filter values
// drawn for the field include both zeros as equality and range values.
func TestSignedZeros(t *testing.T) {
	for engine, feats := range engineFeatures {
		r := newRound(newGen(DefaultSeed, 0), plans[0], feats, "x")
		if err := r.prepare(); err != nil {
			t.Fatal(err)
		}
		for _, name := range r.fieldNames() {
			f := r.specs(name)[0]
			if f.Class != ClassFloat || f.Kind == "sf10" || f.Kind == "sf100" {
				continue // a scaled_float stores a long: one zero
			}
			var neg, pos bool
			for _, d := range r.Docs {
				for _, e := range d.vals[name] {
					if x := e.(float64); x == 0 {
						neg, pos = neg || math.Signbit(x), pos || !math.Signbit(x)
					}
				}
			}
			if !neg || !pos {
				t.Errorf("%s %s: documents hold -0.0 %v, +0 %v", engine, name, neg, pos)
			}
			fg := newFilterGen(newGen(DefaultSeed, 1), r, [][2]string{{name, "nin"}, {name, "gte"}, {name, "lt"}})
			seen := map[string]bool{}
			for range 3000 {
				for _, v := range fg.leaf().values() {
					if n, ok := v.(json.Number); ok {
						if x, err := strconv.ParseFloat(string(n), 64); err == nil && x == 0 {
							seen[string(n)] = true
						}
					}
				}
			}
			for _, z := range []string{"0", "-0", "-0.0"} {
				if !seen[z] {
					t.Errorf("%s %s: no filter value %s in 3000 leaves (saw %v)", engine, name, z, seen)
				}
			}
		}
	}
}
