package retrieval

import (
	"fmt"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Defaults for retrieve options (§7.7, §16.3).
const (
	defaultRRFK   = 60
	defaultLambda = 0.5
	defaultAlpha  = 0.5
)

// gate validates p against the advertised capabilities (§7.7 step 1).
func (e *Engine) gate(p *rcp.RetrieveParams, tenant string) (*retrieval, *rcp.Error) {
	r := &retrieval{p: p, strict: p.IsStrict(), text2: p.IncludeText == nil || *p.IncludeText,
		vectors: p.IncludeVectors != nil && *p.IncludeVectors, tenant: tenant}
	steps := []func(*retrieval) *rcp.Error{
		e.gateQuery, e.gateMode, e.gateFusion, e.gateNever, e.gateShape,
		e.gateMMR, e.gateEncoding, e.gateBudget, e.gateFilter, e.gateCursor, e.gateSession,
	}
	for _, step := range steps {
		if err := step(r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// gateQuery: query is required (-32602); non-text blocks on a text-only
// server are -32005 naming the block type (§4.8); a query longer than
// policy.MaxQueryChars characters (Unicode code points) in one block, or
// in all blocks joined by single spaces, is -32602 (§15.5), before any
// engine or embedder call.
func (e *Engine) gateQuery(r *retrieval) *rcp.Error {
	q := r.p.Query
	if !q.IsSet() || len(q.Blocks) == 0 {
		return rcp.InvalidParams("query", "query is required")
	}
	limit := e.policy.MaxQueryChars
	total := len(q.Blocks) - 1 // the spaces that join the blocks
	for i, b := range q.Blocks {
		if b.Type == "" {
			return rcp.InvalidParams(blockField("query", i, len(q.Blocks)), "a content block needs a type (§4.8)")
		}
		if b.Type != "text" {
			return rcp.OptionUnsupported(b.Type, "content block type %q is not supported; this server is text-only", b.Type)
		}
		n := utf8.RuneCountInString(b.Text)
		if n > limit {
			return rcp.InvalidParams(blockField("query", i, len(q.Blocks)), "query text of %d characters exceeds this server's limit of %d (§15.5)", n, limit)
		}
		total += n
	}
	if total > limit {
		return rcp.InvalidParams("query", "query blocks of %d characters together exceed this server's limit of %d (§15.5)", total, limit)
	}
	r.text, _ = q.Text()
	return nil
}

func (e *Engine) gateMode(r *retrieval) *rcp.Error {
	r.mode = r.p.Mode
	def := e.caps.Retrieve.DefaultMode
	switch {
	case r.mode == "":
		r.mode = def
	case !e.hasMode(r.mode):
		if err := r.degrade(string(r.mode), "mode %q is not advertised", r.mode); err != nil {
			return err
		}
		r.note("mode %s used instead of %s", def, r.mode)
		r.mode = def
	}
	return nil
}

func (e *Engine) gateFusion(r *retrieval) *rcp.Error {
	f := r.p.Fusion
	r.fusion, r.rrfK, r.alpha = rcp.FusionRRF, defaultRRFK, defaultAlpha
	r.weights = map[string]float64{"sparse": 1, "dense": 1}
	if f == nil {
		return nil
	}
	if r.mode != rcp.ModeHybrid {
		r.note("fusion ignored: mode %s runs a single list", r.mode)
		return nil
	}
	if f.Method != "" && !e.hasFusion(f.Method) {
		if err := r.degrade(string(f.Method), "fusion method %q is not advertised", f.Method); err != nil {
			return err
		}
		r.note("fusion rrf used instead of %s", f.Method)
	} else if f.Method != "" {
		r.fusion = f.Method
	}
	return r.fusionParams(f)
}

func (r *retrieval) fusionParams(f *rcp.FusionParams) *rcp.Error {
	if f.RRFK != nil {
		if *f.RRFK < 1 {
			return rcp.InvalidParams("fusion.rrfK", "fusion.rrfK must be a positive integer")
		}
		r.rrfK = *f.RRFK
	}
	if f.Alpha != nil {
		if !(*f.Alpha >= 0 && *f.Alpha <= 1) {
			return rcp.InvalidParams("fusion.alpha", "fusion.alpha must be in [0,1]")
		}
		r.alpha = *f.Alpha
	}
	for name, w := range f.Weights {
		if w < 0 || math.IsInf(w, 0) || math.IsNaN(w) {
			return rcp.InvalidParams("fusion.weights."+name, "fusion weights must be finite and non-negative")
		}
		if _, known := r.weights[name]; known {
			r.weights[name] = w
		}
	}
	return nil
}

// gateNever rejects options this sidecar never advertises: rerank, rewrite,
// recency and indexVersion pinning unless the adapter serves them (§7.7
// strict rule, §7.7.1).
func (e *Engine) gateNever(r *retrieval) *rcp.Error {
	p := r.p
	if err := e.gateRerank(r); err != nil {
		return err
	}
	if p.Rerank != nil && !p.Rerank.Disabled && r.rerank == nil {
		opt := p.Rerank.Method
		if opt == "" {
			opt = "rerank"
		}
		if err := r.degrade(opt, "rerank is not advertised"); err != nil {
			return err
		}
	}
	if p.Rewrite != nil && !p.Rewrite.Disabled {
		opt := p.Rewrite.Value
		if opt == "" {
			opt = "rewrite"
		}
		if err := r.degrade(opt, "query rewrite %q is not advertised", opt); err != nil {
			return err
		}
	}
	if err := e.gateRecency(r); err != nil {
		return err
	}
	switch {
	case p.IndexVersion == "":
	case !e.caps.Retrieve.Snapshots:
		return r.degrade("indexVersion", "snapshots are not advertised; indexVersion cannot be pinned")
	default:
		return e.openVersion(r)
	}
	return nil
}

// gateShape checks modality, unit and level: absent retrieve.modalities
// means text only (§4.8), absent units means chunk/passage (§6.1), absent
// levels means a flat corpus.
func (e *Engine) gateShape(r *retrieval) *rcp.Error {
	p := r.p
	if p.Modality != "" && p.Modality != "text" {
		if err := r.degrade(p.Modality, "modality %q is not advertised", p.Modality); err != nil {
			return err
		}
	}
	if err := e.gateUnit(r); err != nil {
		return err
	}
	if p.Level != nil && *p.Level < 0 {
		return rcp.InvalidParams("level", "level must be >= 0")
	}
	if p.Level != nil && *p.Level > 0 {
		return r.degrade("level", "the corpus is flat; level %d is not available", *p.Level)
	}
	if p.Seed != nil && !e.ev.Deterministic {
		r.note("seed ignored: this backend does not guarantee deterministic results")
	}
	return nil
}

// gateUnit serves an advertised unit (§7.7.2; hits echo it) and treats
// chunk/passage as the chunk default; anything else follows strict.
func (e *Engine) gateUnit(r *retrieval) *rcp.Error {
	u, units := r.p.Unit, e.caps.Retrieve.Units
	switch {
	case u == "" || u == "chunk" || u == "passage":
		u = "chunk"
	case !slices.Contains(units, u):
		if err := r.degrade(u, "unit %q is not advertised", u); err != nil {
			return err
		}
		u = "chunk"
	}
	if len(units) > 0 {
		r.unit = u
	}
	return nil
}

func (e *Engine) gateMMR(r *retrieval) *rcp.Error {
	if r.p.MMR == nil {
		return nil
	}
	lambda := defaultLambda
	if l := r.p.MMR.Lambda; l != nil {
		if !(*l >= 0 && *l <= 1) {
			return rcp.InvalidParams("mmr.lambda", "mmr.lambda must be in [0,1]")
		}
		lambda = *l
	}
	if !e.caps.Retrieve.MMR {
		return r.degrade("mmr", "mmr is not advertised")
	}
	r.mmr, r.lambda = true, lambda
	r.nativeMMR = e.ev.NativeMMR && r.mode == rcp.ModeDense
	return nil
}

// gateEncoding: hit vectors are always JSON number arrays. §7.3.1 lets
// f32-base64 apply to hit.vector, but the normative schema (Hit.vector) only
// has the array form, and "json" is the always-available fallback, so a
// request for f32-base64 is served as json and says so in usage.notes.
// Any other value is an unknown encoding (§7.3.1: -32005 under strict).
func (e *Engine) gateEncoding(r *retrieval) *rcp.Error {
	switch enc := r.p.Encoding; enc {
	case "", "json":
	case "f32-base64":
		r.note("hit vectors are encoded as json: f32-base64 applies to embed results only")
	default:
		if err := r.degrade(enc, "vector encoding %q is not advertised", enc); err != nil {
			return err
		}
		r.note("vectors encoded as json")
	}
	if r.vectors && len(e.ev.VectorFields) == 0 {
		r.note("includeVectors: the target stores no vectors")
	}
	return nil
}

func (e *Engine) gateBudget(r *retrieval) *rcp.Error {
	tb := r.p.TokenBudget
	if tb == nil {
		return nil
	}
	if *tb < 1 {
		return rcp.InvalidParams("tokenBudget", "tokenBudget must be a positive integer")
	}
	if !e.caps.Retrieve.TokenBudget {
		return r.degrade("tokenBudget", "tokenBudget is not advertised")
	}
	r.budget = int(min(*tb, math.MaxInt32))
	return nil
}

// gateFilter validates the filter against the advertised fields and
// operators (§8); a filter is never silently dropped, even if not strict.
func (e *Engine) gateFilter(r *retrieval) *rcp.Error {
	raw := r.p.Filter
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if e.caps.Filter == nil {
		return rcp.OptionUnsupported("filter", "filter is not advertised")
	}
	f, err := filterlang.ValidateFilter(raw, e.fields, e.ops)
	if err != nil {
		return err
	}
	if err := filterlang.CheckFieldOps(f, func(field string) []filterlang.Op { return e.fieldOps[field] }); err != nil {
		return err
	}
	r.filter = f
	return nil
}

func (e *Engine) gateCursor(r *retrieval) *rcp.Error {
	if r.p.Cursor == "" || e.caps.Pagination != nil {
		return nil
	}
	if err := r.degrade("cursor", "pagination is not advertised"); err != nil {
		return err
	}
	r.p = withoutCursor(r.p)
	return nil
}

func withoutCursor(p *rcp.RetrieveParams) *rcp.RetrieveParams {
	c := *p
	c.Cursor = ""
	return &c
}

// blockField is the params path of block i of a query or input that holds
// n blocks: the field itself for a single block, else field[i].
func blockField(field string, i, n int) string {
	if n == 1 {
		return field
	}
	return fmt.Sprintf("%s[%d]", field, i)
}
