package capability

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// Reason explains one capability decision: what was considered, whether it
// is advertised, and the evidence or policy behind that.
type Reason struct {
	Capability string `json:"capability"`
	Advertised bool   `json:"advertised"`
	Why        string `json:"why"`
}

// EmbedEncodings are the vector encodings the sidecar can emit (§7.3.1).
var EmbedEncodings = []string{"json", "f32-base64"}

// deriver accumulates capabilities and reasons for one Derive call.
type deriver struct {
	ev      *Evidence
	p       Policy
	caps    rcp.Capabilities
	reasons []Reason
}

// Derive turns probe evidence and operator policy into the capability set
// (§6: presence ⇒ supported, nothing advertised that cannot be served) and
// a Reason for every capability key it considered. Pure and deterministic.
func Derive(ev *Evidence, p Policy) (rcp.Capabilities, []Reason) {
	if ev == nil {
		ev = &Evidence{}
	}
	d := &deriver{ev: ev, p: p.WithDefaults()}
	d.retrieve()
	d.filter()
	d.citations()
	d.pagination()
	d.index()
	d.embed()
	d.rerank()
	d.session()
	d.feedback()
	d.never("transform", "query transformation is not implemented by the sidecar")
	d.flag("streaming", d.p.Streaming, &d.caps.Streaming, "policy")
	d.logCap()
	return d.caps, d.reasons
}

func (d *deriver) note(key string, adv bool, format string, args ...any) {
	d.reasons = append(d.reasons, Reason{Capability: key, Advertised: adv, Why: fmt.Sprintf(format, args...)})
}

func (d *deriver) never(key, why string) { d.note(key, false, "%s", why) }

func (d *deriver) flag(key string, on bool, dst **struct{}, src string) {
	if on {
		*dst = &struct{}{}
		d.note(key, true, "enabled by %s", src)
		return
	}
	d.note(key, false, "disabled by %s", src)
}

func (d *deriver) logCap() {
	if !d.p.Log {
		d.note("log", false, "disabled by policy")
		return
	}
	d.caps.Log = &rcp.LogCap{Levels: []string{"debug", "info", "notice", "warning", "error"}}
	d.note("log", true, "enabled by policy")
}

// DenseField returns the vector field dense retrieval uses: the first one
// the query can be embedded for, either by the engine (QueryInference) or
// by the configured embedder with matching dimension and element type (an
// int8 field needs int8 vectors, which a float embedder cannot give
// without changing every score). Nil if none.
func DenseField(ev *Evidence, p Policy) *VectorField {
	for i := range ev.VectorFields {
		vf := &ev.VectorFields[i]
		if ev.QueryInference || embeddable(vf, p) {
			return vf
		}
	}
	return nil
}

// embeddable reports whether the configured embedder's vectors fit vf.
func embeddable(vf *VectorField, p Policy) bool {
	return p.EmbedDim > 0 && p.EmbedDim == vf.Dims && p.EmbedElement.OrFloat() == vf.Element.OrFloat()
}

// ModeScale returns the score scale and floor of a retrieval mode (§6.1),
// as adapters label the scores they return. A floor is returned only where
// the scoring function guarantees one: BM25 ≥ 0; cosine ≥ -1; l2 and
// manhattan distances d, which adapters return as s = 1/(1+d) ∈ (0,1], are
// "unbounded" with floor 0; dot products and fused (hybrid) scores have none.
// Dense scores a quantised index only approximates (VectorField.ApproxScores)
// are "unbounded" with no floor whatever the similarity.
func ModeScale(m rcp.Mode, vf *VectorField) (rcp.ScoreScale, *float64) {
	switch m {
	case rcp.ModeSparse:
		return rcp.ScaleBM25, floorOf(0)
	case rcp.ModeDense:
		return denseScale(vf)
	}
	return rcp.ScaleUnbounded, nil
}

// denseScale is ModeScale for a dense stage on vf (nil: unknown field).
func denseScale(vf *VectorField) (rcp.ScoreScale, *float64) {
	if vf == nil || vf.ApproxScores {
		return rcp.ScaleUnbounded, nil
	}
	switch vf.Similarity {
	case SimCosine:
		return rcp.ScaleCosine, floorOf(-1)
	case SimDot:
		return rcp.ScaleDot, nil
	case SimL2, SimManhattan:
		return rcp.ScaleUnbounded, floorOf(0) // 1/(1+d) > 0
	}
	return rcp.ScaleUnbounded, nil
}

func floorOf(f float64) *float64 { return &f }

func (d *deriver) retrieve() {
	sparse := d.sparseMode()
	dense := d.denseMode()
	hybrid := sparse && dense
	d.hybridMode(sparse, dense)
	if !sparse && !dense {
		d.note("retrieve", false, "target %q has no searchable text or embeddable vector field", d.ev.Target)
		d.fusion(false)
		return
	}
	r := &rcp.RetrieveCap{MaxK: d.p.MaxK, TokenBudget: true, Deterministic: d.ev.Deterministic}
	for _, m := range []struct {
		on   bool
		mode rcp.Mode
	}{{dense, rcp.ModeDense}, {sparse, rcp.ModeSparse}, {hybrid, rcp.ModeHybrid}} {
		if m.on {
			r.Modes = append(r.Modes, m.mode)
		}
	}
	r.DefaultMode = defaultMode(sparse, dense)
	r.ScoreScale, r.ScoreFloor = ModeScale(r.DefaultMode, DenseField(d.ev, d.p))
	d.caps.Retrieve = r
	d.note("retrieve", true, "target %q is searchable; maxK %d, default mode %s", d.ev.Target, r.MaxK, r.DefaultMode)
	d.fusion(hybrid)
	d.retrieveFlags(dense)
}

func defaultMode(sparse, dense bool) rcp.Mode {
	switch {
	case sparse && dense:
		return rcp.ModeHybrid
	case sparse:
		return rcp.ModeSparse
	}
	return rcp.ModeDense
}

func (d *deriver) sparseMode() bool {
	if len(d.ev.TextFields) == 0 {
		d.note("retrieve.modes.sparse", false, "no BM25 text field on the target")
		return false
	}
	names := make([]string, len(d.ev.TextFields))
	for i, f := range d.ev.TextFields {
		names[i] = f.Name
	}
	d.note("retrieve.modes.sparse", true, "BM25 over text fields %s", strings.Join(names, ", "))
	return true
}

func (d *deriver) denseMode() bool {
	if vf := DenseField(d.ev, d.p); vf != nil {
		how := fmt.Sprintf("embedder %d-d %s", d.p.EmbedDim, d.p.EmbedElement.OrFloat())
		if d.ev.QueryInference {
			how = "engine-side query inference"
		}
		d.note("retrieve.modes.dense", true, "vector field %s (%s) with %s", vf.Name, describeVF(vf), how)
		return true
	}
	switch {
	case len(d.ev.VectorFields) == 0:
		d.note("retrieve.modes.dense", false, "no vector field on the target")
	case d.p.EmbedDim == 0:
		vf := &d.ev.VectorFields[0]
		d.note("retrieve.modes.dense", false, "vector field %s (%s) but no embedder configured%s", vf.Name, describeVF(vf), elementAdvice(vf, d.p))
	default:
		vf := &d.ev.VectorFields[0]
		d.note("retrieve.modes.dense", false, "vector field %s (%s) but the embedder produces %d-d %s vectors%s",
			vf.Name, describeVF(vf), d.p.EmbedDim, d.p.EmbedElement.OrFloat(), elementAdvice(vf, d.p))
	}
	return false
}

// elementAdvice says what to configure when vf's element type is not the
// embedder's ("" when they agree).
func elementAdvice(vf *VectorField, p Policy) string {
	switch el := vf.Element.OrFloat(); {
	case el == p.EmbedElement.OrFloat():
		return ""
	case el == ElementInt8:
		return ": configure an embedder that returns int8 embeddings of the same model the index was built with (embedder.element_type: int8)"
	case el == ElementFloat:
		return ": configure an embedder that returns float embeddings (embedder.element_type: float)"
	}
	return fmt.Sprintf(": the sidecar has no embedder for %s vectors", vf.Element)
}

func describeVF(vf *VectorField) string {
	el := ""
	if vf.Element.OrFloat() != ElementFloat {
		el = ", " + string(vf.Element) + " elements"
	}
	if vf.ApproxScores {
		return fmt.Sprintf("%d-d %s%s, approximate scores: quantised index, labelled unbounded", vf.Dims, vf.Similarity, el)
	}
	return fmt.Sprintf("%d-d %s%s", vf.Dims, vf.Similarity, el)
}

func (d *deriver) hybridMode(sparse, dense bool) {
	if sparse && dense {
		d.note("retrieve.modes.hybrid", true, "both sparse and dense are available")
		return
	}
	d.note("retrieve.modes.hybrid", false, "needs both sparse and dense (sparse=%t, dense=%t)", sparse, dense)
}

func (d *deriver) fusion(hybrid bool) {
	if !hybrid {
		for _, m := range []string{"rrf", "weighted", "convex"} {
			d.note("retrieve.fusion."+m, false, "fusion applies only to hybrid, which is not available")
		}
		return
	}
	r := d.caps.Retrieve
	r.Fusion = append(r.Fusion, rcp.FusionRRF, rcp.FusionWeighted)
	d.note("retrieve.fusion.rrf", true, "%s", rrfWhere(d.ev))
	d.note("retrieve.fusion.weighted", true, "sidecar min-max weighted fusion")
	_, sf := ModeScale(rcp.ModeSparse, nil)
	dscale, df := ModeScale(rcp.ModeDense, DenseField(d.ev, d.p))
	if sf == nil || df == nil {
		why := fmt.Sprintf("dense scale %s has no score floor (§16.3 needs one per list)", dscale)
		if vf := DenseField(d.ev, d.p); vf != nil && vf.ApproxScores {
			why = fmt.Sprintf("dense scores on %s are approximate (quantised index), so they have no score floor (§16.3 needs one per list)", vf.Name)
		}
		d.note("retrieve.fusion.convex", false, "%s", why)
		return
	}
	r.Fusion = append(r.Fusion, rcp.FusionConvex)
	d.note("retrieve.fusion.convex", true, "sidecar floor-anchored fusion (bm25 floor %g, %s floor %g)", *sf, dscale, *df)
}

// rrfWhere says who fuses rrf: the engine only for equal unit weights and
// the rrfK values it honours, the sidecar otherwise.
func rrfWhere(ev *Evidence) string {
	switch {
	case !ev.NativeRRF:
		return "sidecar reciprocal rank fusion"
	case ev.NativeRRFKs != nil:
		return fmt.Sprintf("native reciprocal rank fusion for rrfK in %v with unit weights; sidecar otherwise", ev.NativeRRFKs)
	}
	return "native reciprocal rank fusion with unit weights; sidecar for other weights"
}

func (d *deriver) retrieveFlags(dense bool) {
	r := d.caps.Retrieve
	switch {
	case dense && d.ev.NativeMMR:
		r.MMR = true
		d.note("retrieve.mmr", true, "engine-native MMR for dense; sidecar MMR over returned document vectors otherwise")
	case dense:
		r.MMR = true
		d.note("retrieve.mmr", true, "sidecar MMR over returned document vectors")
	case d.ev.NativeMMR:
		r.MMR = true
		// Native MMR needs a dense stage, which is not offered; the engine
		// still returns its stored vectors, so the sidecar diversifies.
		d.note("retrieve.mmr", true, "sidecar MMR over stored document vectors (native MMR needs dense mode, not offered)")
	default:
		d.note("retrieve.mmr", false, "no usable document vectors and no native MMR")
	}
	d.note("retrieve.tokenBudget", true, "sidecar token-budget packing")
	d.note("retrieve.deterministic", r.Deterministic, "adapter evidence: deterministic ties=%t", d.ev.Deterministic)
	d.snapshots()
	d.units()
	if d.ev.NativeRecency && d.ev.RecencyLexicalOnly {
		d.note("retrieve.recency", true, "engine-side recency decay on date fields, sparse retrieval only (dense and hybrid: -32005, or with strict:false dense without it)")
	} else {
		d.note("retrieve.recency", d.ev.NativeRecency, "engine-side recency decay on date fields=%t", d.ev.NativeRecency)
	}
}

func (d *deriver) snapshots() {
	if !d.ev.Snapshots {
		d.note("retrieve.snapshots", false, "indexVersion pinning is not implemented")
		return
	}
	d.caps.Retrieve.Snapshots = true
	d.note("retrieve.snapshots", true, "adapter pins and echoes engine snapshots as indexVersion")
}

// units advertises the granularities the adapter proved (§7.7.2); absent
// means chunk/passage only.
func (d *deriver) units() {
	if len(d.ev.Units) == 0 {
		d.note("retrieve.units", false, "chunk/passage only")
		return
	}
	d.caps.Retrieve.Units = append([]string(nil), d.ev.Units...)
	d.note("retrieve.units", true, "units %s", strings.Join(d.ev.Units, ","))
}

// filter advertises each field with at least one usable operator and, as
// filter.operators, the union of the operators the fields support (§8):
// an operator no field serves exactly is never advertised.
func (d *deriver) filter() {
	if d.caps.Retrieve == nil {
		d.note("filter", false, "retrieve is not advertised")
		return
	}
	fields := map[string]string{}
	perField := map[string][]filterlang.Op{}
	opset := map[filterlang.Op]bool{}
	precision := map[string]rcp.FieldPrecision{}
	for _, f := range d.ev.FilterFields {
		ops := FieldOps(f, d.p)
		if len(ops) == 0 {
			continue
		}
		for _, op := range ops {
			opset[op] = true
		}
		fields[f.Name] = string(f.Type)
		perField[f.Name] = ops
		if f.Type == filterlang.TypeFloat && f.Precision.Stored != "" {
			precision[f.Name] = f.Precision
		}
	}
	d.setFilter(fields, opset, perField, precision)
}

// precisionRule is how filters compare on a float field, as the
// capability's FieldPrecision declares it.
const precisionRule = "a filter value and a stored value compare once rounded to the field's precision, so two values that round alike are equal; -0.0 equals 0"

// precisionList renders field precisions in name order.
func precisionList(ps map[string]rcp.FieldPrecision) string {
	names := make([]string, 0, len(ps))
	for n := range ps {
		names = append(names, n)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + " " + ps[n].String()
	}
	return strings.Join(parts, ", ")
}

// setFilter advertises the fields and the union of their operators, and
// lists under FieldOperators each field that serves fewer of them than
// its type allows, so a client can tell without trying.
func (d *deriver) setFilter(fields map[string]string, opset map[filterlang.Op]bool, perField map[string][]filterlang.Op, precision map[string]rcp.FieldPrecision) {
	var ops []string
	for _, op := range filterlang.AllOps {
		if opset[op] {
			ops = append(ops, string(op))
		}
	}
	if len(fields) == 0 || len(ops) == 0 {
		d.note("filter", false, "no filterable field (or operator) survives evidence %d fields and policy", len(d.ev.FilterFields))
		return
	}
	fc := &rcp.FilterCap{Fields: fields, Operators: ops}
	for name, served := range perField {
		var implied int
		for _, op := range filterlang.AllowedOps(filterlang.FieldType(fields[name])) {
			if opset[op] {
				implied++
			}
		}
		if len(served) < implied {
			if fc.FieldOperators == nil {
				fc.FieldOperators = map[string][]string{}
			}
			for _, op := range served {
				fc.FieldOperators[name] = append(fc.FieldOperators[name], string(op))
			}
		}
	}
	why := fmt.Sprintf("%d of %d probed fields, operators %s", len(fields), len(d.ev.FilterFields), strings.Join(ops, ","))
	if len(precision) > 0 {
		fc.FieldPrecision = precision
		why += fmt.Sprintf("; float fields stored as %s (%s)", precisionList(precision), precisionRule)
	}
	d.caps.Filter = fc
	d.note("filter", true, "%s", why)
}

func (d *deriver) citations() {
	switch {
	case d.caps.Retrieve == nil:
		d.note("citations", false, "retrieve is not advertised")
	case d.ev.TitleField == "" && d.ev.URIField == "":
		d.note("citations", false, "no title or URI field on the target")
	default:
		d.caps.Citations = &struct{}{}
		d.note("citations", true, "title field %q, uri field %q", d.ev.TitleField, d.ev.URIField)
	}
}

func (d *deriver) pagination() {
	switch {
	case d.caps.Retrieve == nil:
		d.note("pagination", false, "retrieve is not advertised")
	case !d.ev.Pagination:
		d.note("pagination", false, "adapter cannot page")
	default:
		d.caps.Pagination = &struct{}{}
		d.note("pagination", true, "sealed offset cursors")
	}
}

func (d *deriver) index() {
	switch {
	case !d.ev.Writable:
		d.note("index", false, "engine target is not writable")
	case !d.p.Writable:
		d.note("index", false, "writes disabled by policy")
	default:
		d.caps.Index = &rcp.IndexCap{Writable: true}
		d.note("index", true, "engine writable and enabled by policy")
	}
}

func (d *deriver) embed() {
	if d.p.EmbedDim <= 0 {
		d.note("embed", false, "no embedder configured")
		return
	}
	id := d.p.EmbedIdentity
	if id == "" {
		id = "unknown"
	}
	d.caps.Embed = &rcp.EmbedCap{Dimension: d.p.EmbedDim, Identity: id, BatchLimit: d.p.EmbedBatchLimit,
		Encodings: append([]string(nil), EmbedEncodings...)}
	d.note("embed", true, "embedder %s (%d-d), batch limit %d", id, d.p.EmbedDim, d.p.EmbedBatchLimit)
}

// NativeRerankerName names an engine's own reranker for probe and
// usage.notes: its Via, else its models.
func NativeRerankerName(r *RerankerFacts) string {
	if r.Via != "" {
		return r.Via
	}
	if len(r.Models) > 0 {
		return "reranker " + strings.Join(r.Models, ",")
	}
	return "reranker"
}

func (d *deriver) rerank() {
	r, native := d.p.Reranker, false
	if r == nil && d.ev.NativeReranker != nil {
		r, native = d.ev.NativeReranker, true
	}
	switch {
	case r == nil:
		d.note("rerank", false, "no reranker is configured (reranker: section) and the engine offers none")
		d.note("retrieve.rerankBuiltin", false, "no reranker is configured")
		return
	case native && r.Failed != "":
		d.note("rerank", false, "no reranker is configured (reranker: section) and the engine's %s is not usable: %s", NativeRerankerName(r), r.Failed)
		d.note("retrieve.rerankBuiltin", false, "no usable reranker")
		return
	case r.Failed != "":
		d.note("rerank", false, "the reranker's start-up check failed: %s", r.Failed)
		d.note("retrieve.rerankBuiltin", false, "the reranker's start-up check failed")
		return
	}
	d.caps.Rerank = &rcp.RerankCap{Methods: []string{r.Method}, MaxCandidates: r.MaxCandidates, Models: append([]string(nil), r.Models...)}
	if native {
		d.note("rerank", true, "engine-native %s reranker, %s, at most %d candidates: %s", r.Method, NativeRerankerName(r), r.MaxCandidates, r.Proof)
	} else {
		d.note("rerank", true, "sidecar %s reranker %s, at most %d candidates: %s", r.Method, strings.Join(r.Models, ","), r.MaxCandidates, r.Proof)
	}
	if d.caps.Retrieve != nil {
		d.caps.Retrieve.RerankBuiltin = true
		switch {
		case !native:
			d.note("retrieve.rerankBuiltin", true, "retrieve reranks its top rerank.topN candidates with the %s reranker (§7.7 funnel)", r.Method)
		case d.ev.NativeRerankStage:
			d.note("retrieve.rerankBuiltin", true, "retrieve reranks its top rerank.topN candidates with the engine's %s reranker, %s, inside the engine's search where the request allows it and otherwise through the engine's rerank API on the hits' texts (§7.7 funnel)", r.Method, NativeRerankerName(r))
		default:
			d.note("retrieve.rerankBuiltin", true, "retrieve reranks its top rerank.topN candidates with the engine's %s reranker, %s, through the engine's rerank API on the hits' texts (§7.7 funnel)", r.Method, NativeRerankerName(r))
		}
	}
}

func (d *deriver) session() {
	s := d.p.Session
	switch {
	case s == nil:
		d.note("session", false, "no session section configured: sessionId is ignored")
	case d.caps.Retrieve == nil:
		d.note("session", false, "retrieve is not advertised")
	default:
		d.caps.Session = &rcp.SessionCap{Dedup: s.Dedup, TTLSeconds: s.TTLSeconds}
		d.note("session", true, "in-process store (LRU of %d sessions, %d ids each, %ds TTL, namespaced by API key and tenant); dedup %v",
			s.MaxSessions, s.MaxIDs, s.TTLSeconds, s.Dedup)
	}
}

func (d *deriver) feedback() {
	if !d.p.Feedback {
		d.note("feedback", false, "feedback disabled by configuration")
		return
	}
	d.caps.Feedback = &struct{}{}
	d.note("feedback", true, "signals are validated, counted and logged")
}

// Conformance is the highest level (§14) a capability set meets:
//   - L0, the base protocol, which every server built on rcp/server meets;
//   - L1 (§14.2): retrieve serving at least one mode, with filter and
//     citations (k and minScore are honoured by every Engine; serving all
//     three modes is a SHOULD, not a condition);
//   - L2 (§14.3): L1 plus a selection — at least two — of the SOTA
//     capabilities §14.3 lists that the sidecar can serve: rerank,
//     streaming, pagination, log, reproducibility (retrieve.deterministic
//     or retrieve.snapshots).
//
// It never claims more than the capability set shows, so the official
// harness, which certifies a level from checks on the advertised
// capabilities, finds the declaration honest.
func Conformance(c rcp.Capabilities) string {
	r := c.Retrieve
	if r == nil || len(r.Modes) == 0 || c.Filter == nil || c.Citations == nil {
		return "L0"
	}
	sota := 0
	for _, on := range []bool{c.Rerank != nil, c.Streaming != nil, c.Pagination != nil, c.Log != nil, r.Deterministic || r.Snapshots} {
		if on {
			sota++
		}
	}
	if sota >= 2 {
		return "L2"
	}
	return "L1"
}
