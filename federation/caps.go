package federation

import (
	"fmt"
	"slices"
	"sort"

	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Mode and fusion orders used for stable capability lists.
var (
	modeOrder   = []rcp.Mode{rcp.ModeDense, rcp.ModeSparse, rcp.ModeHybrid}
	fusionOrder = []rcp.FusionMethod{rcp.FusionRRF, rcp.FusionWeighted, rcp.FusionConvex}
)

// unionCaps computes the federated capability set (§16.4 effective set):
// retrieve and filter are unions over the engines that advertise them,
// catalog counts the engines. Nothing is advertised that no engine (or
// the aggregator's own fusion) can serve: embed, index, streaming and
// pagination are not federated. conflicts names the filter fields
// dropped because engines disagree on their type or float precision.
func unionCaps(es []Engine) (caps rcp.Capabilities, conflicts []string) {
	caps.Catalog = &rcp.CatalogCap{Engines: len(es)}
	var rs []*rcp.RetrieveCap
	var fs []*rcp.FilterCap
	citations := true
	for _, e := range es {
		c := e.Backend.Capabilities()
		if c.Retrieve == nil {
			continue
		}
		rs = append(rs, c.Retrieve)
		if c.Filter != nil {
			fs = append(fs, c.Filter)
		}
		citations = citations && c.Citations != nil
	}
	if len(rs) == 0 {
		return caps, nil
	}
	caps.Retrieve = unionRetrieve(rs)
	caps.Session = commonSession(es)
	caps.Filter, conflicts = unionFilter(fs)
	if citations {
		caps.Citations = &struct{}{}
	}
	return caps, conflicts
}

// unionRetrieve merges retrieve metadata. Fused scores are RRF or convex
// sums of non-negative terms, so the aggregator's own scoreFloor is 0 and
// it has no scoreScale.
func unionRetrieve(rs []*rcp.RetrieveCap) *rcp.RetrieveCap {
	out := &rcp.RetrieveCap{Deterministic: true, Confidence: true}
	floors := false
	units := map[string]bool{}
	for _, r := range rs {
		out.MaxK = max(out.MaxK, r.MaxK)
		out.Modes = appendNew(out.Modes, r.Modes...)
		out.Fusion = appendNew(out.Fusion, r.Fusion...)
		out.MMR = out.MMR || r.MMR
		out.RerankBuiltin = out.RerankBuiltin || r.RerankBuiltin
		out.Deterministic = out.Deterministic && r.Deterministic
		out.Confidence = out.Confidence && r.Confidence
		floors = floors || r.ScoreFloor != nil
		for _, u := range unitsOf(r) {
			units[u] = true
		}
	}
	out.Fusion = appendNew(out.Fusion, rcp.FusionRRF)
	if floors {
		out.Fusion = appendNew(out.Fusion, rcp.FusionConvex)
	}
	out.Modes = ordered(out.Modes, modeOrder)
	out.Fusion = ordered(out.Fusion, fusionOrder)
	out.Units = unionUnits(units)
	out.DefaultMode = commonDefault(rs)
	zero := 0.0
	out.ScoreFloor = &zero
	return out
}

// unitsOf returns the units r serves; absent means chunk/passage (§6.1).
func unitsOf(r *rcp.RetrieveCap) []string {
	if len(r.Units) == 0 {
		return []string{"chunk", "passage"}
	}
	return r.Units
}

// unionUnits returns nil when only the implicit chunk/passage are served.
func unionUnits(units map[string]bool) []string {
	if len(units) == 2 && units["chunk"] && units["passage"] {
		return nil
	}
	out := make([]string, 0, len(units))
	for u := range units {
		out = append(out, u)
	}
	sort.Strings(out)
	return out
}

// commonDefault is the engines' defaultMode when they all agree.
func commonDefault(rs []*rcp.RetrieveCap) rcp.Mode {
	d := rs[0].DefaultMode
	for _, r := range rs[1:] {
		if r.DefaultMode != d {
			return ""
		}
	}
	return d
}

// unionFilter merges filter fields with consistent types and stored
// precisions; a field whose type or float precision differs between
// engines is dropped and reported, as a field mapped differently by the
// indices behind an alias is. Operators are the union, and so are a
// field's own operators (FieldOperators), listed when narrower than the
// union its type allows.
func unionFilter(fs []*rcp.FilterCap) (*rcp.FilterCap, []string) {
	if len(fs) == 0 {
		return nil, nil
	}
	types := map[string]string{}
	precisions := map[string][]rcp.FieldPrecision{}
	bad := map[string]bool{}
	var ops []string
	for _, f := range fs {
		for name, t := range f.Fields {
			if prev, ok := types[name]; ok && prev != t {
				bad[name] = true
			}
			types[name] = t
			if p, ok := f.FieldPrecision[name]; ok && !slices.Contains(precisions[name], p) {
				precisions[name] = append(precisions[name], p)
			}
		}
		ops = appendNew(ops, f.Operators...)
	}
	out := &rcp.FilterCap{Fields: map[string]string{}, Operators: ops}
	var conflicts []string
	for name, t := range types {
		switch {
		case bad[name]:
			conflicts = append(conflicts, fmt.Sprintf("filter field %q has conflicting types across engines: %s", name, fieldTypes(fs, name)))
			continue
		case len(precisions[name]) > 1:
			conflicts = append(conflicts, fmt.Sprintf("filter field %q is stored at different precisions across engines: %s", name, precisionNames(precisions[name])))
			continue
		case len(precisions[name]) == 1:
			if out.FieldPrecision == nil {
				out.FieldPrecision = map[string]rcp.FieldPrecision{}
			}
			out.FieldPrecision[name] = precisions[name][0]
		}
		out.Fields[name] = t
	}
	sort.Strings(conflicts)
	out.Operators = ordered(out.Operators, opOrder())
	out.FieldOperators = unionFieldOps(fs, out)
	return out, conflicts
}

func precisionNames(ps []rcp.FieldPrecision) []string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.String()
	}
	sort.Strings(names)
	return names
}

// unionFieldOps lists the fields whose engines together serve fewer of
// out.Operators than the field's type allows.
func unionFieldOps(fs []*rcp.FilterCap, out *rcp.FilterCap) map[string][]string {
	var per map[string][]string
	for name, t := range out.Fields {
		var served []string
		for _, f := range fs {
			if _, ok := f.Fields[name]; ok {
				served = appendNew(served, f.OpsOf(name)...)
			}
		}
		var have, implied []string
		for _, op := range filterlang.AllowedOps(filterlang.FieldType(t)) {
			if slices.Contains(out.Operators, string(op)) {
				implied = append(implied, string(op))
				if slices.Contains(served, string(op)) {
					have = append(have, string(op))
				}
			}
		}
		if len(have) < len(implied) {
			if per == nil {
				per = map[string][]string{}
			}
			per[name] = have
		}
	}
	return per
}

func fieldTypes(fs []*rcp.FilterCap, name string) []string {
	var ts []string
	for _, f := range fs {
		if t, ok := f.Fields[name]; ok {
			ts = appendNew(ts, t)
		}
	}
	sort.Strings(ts)
	return ts
}

// opOrder is filterlang.AllOps as strings.
func opOrder() []string {
	out := make([]string, len(filterlang.AllOps))
	for i, op := range filterlang.AllOps {
		out[i] = string(op)
	}
	return out
}

// appendNew appends the vs not already in s.
func appendNew[T comparable](s []T, vs ...T) []T {
	for _, v := range vs {
		if !slices.Contains(s, v) {
			s = append(s, v)
		}
	}
	return s
}

// ordered returns the members of s in the order of ref, then any others.
func ordered[T comparable](s, ref []T) []T {
	var out []T
	for _, v := range ref {
		if slices.Contains(s, v) {
			out = append(out, v)
		}
	}
	for _, v := range s {
		if !slices.Contains(ref, v) {
			out = append(out, v)
		}
	}
	return out
}

// commonSession is the session capability every engine that retrieves
// advertises (§7.7.3): the federation passes sessionId on to each, so
// dedup holds only if every one dedups, for as long as the shortest TTL.
// Nil when any retrieving engine ignores sessionId.
func commonSession(es []Engine) *rcp.SessionCap {
	var out *rcp.SessionCap
	for _, e := range es {
		c := e.Backend.Capabilities()
		switch {
		case c.Retrieve == nil:
			continue
		case c.Session == nil:
			return nil
		case out == nil:
			s := *c.Session
			out = &s
		default:
			out.Dedup = out.Dedup && c.Session.Dedup
			if c.Session.TTLSeconds > 0 && (out.TTLSeconds == 0 || c.Session.TTLSeconds < out.TTLSeconds) {
				out.TTLSeconds = c.Session.TTLSeconds
			}
		}
	}
	return out
}
