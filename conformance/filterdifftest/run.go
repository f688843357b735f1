package filterdifftest

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// Target is one live engine the suite runs against, wired by the
// adapter's test with its own helpers.
type Target struct {
	// Engine names the engine in reports, e.g. "elasticsearch".
	Engine string
	// URL is the engine's base URL: documents are written with _bulk and
	// aliases with _aliases there.
	URL string
	// Package is the test's package for the reproduction line, e.g.
	// "./adapters/elasticsearch/".
	Package string
	// Test is the test's name (default "TestLiveFilterDifferential").
	Test string
	// Features are the field types and mapping sections the engine has;
	// kinds needing others are not generated.
	Features Feature
	// CreateIndex creates an index from a settings and mappings body.
	CreateIndex func(ctx context.Context, name string, body map[string]any) error
	// DeleteIndex deletes an index; errors are ignored.
	DeleteIndex func(name string)
	// Open opens the sidecar's adapter on an index or alias, with
	// bm25Field as its only BM25 field and its content field.
	Open func(ctx context.Context, index, bm25Field string) (adapters.Adapter, error)
}

// Environment variables the suite reads.
const (
	// EnvSeed fixes the seed of the run.
	EnvSeed = "RCP_FILTERDIFF_SEED"
	// EnvLong runs seed after fresh seed for a duration such as 10m.
	EnvLong = "RCP_FILTERDIFF_LONG"
	// EnvKeep, when set, leaves the generated indices in place for
	// inspection.
	EnvKeep = "RCP_FILTERDIFF_KEEP"
)

// DefaultSeed is the seed of a run without EnvSeed.
const DefaultSeed = 20240310

// Budget of one round.
const (
	// perPair single-leaf filters run for every advertised pair (exists
	// alternates true and false).
	perPair = 1
	// trees random filter trees run per round.
	trees = 150
	// shrinkLimit failing trees per round are reduced to a failing leaf.
	shrinkLimit = 25
	// printTotal classes have their first failure printed in full; the
	// summary counts every failure.
	printTotal = 60
)

// Run runs the suite against tg: the rounds of one seed (EnvSeed, else
// DefaultSeed), or with EnvLong the rounds of fresh random seeds until the
// duration is spent. Each seed logs a summary line; every failure is an
// error that says how to reproduce it.
func Run(t *testing.T, tg Target) {
	if tg.Test == "" {
		tg.Test = "TestLiveFilterDifferential"
	}
	seed := uint64(DefaultSeed)
	if s := os.Getenv(EnvSeed); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", EnvSeed, s, err)
		}
		seed = n
	}
	long := time.Duration(0)
	if s := os.Getenv(EnvLong); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("%s=%q: %v", EnvLong, s, err)
		}
		long = d
	}
	if long == 0 {
		runSeed(t, tg, seed)
		return
	}
	deadline := time.Now().Add(long)
	for n := 0; n == 0 || time.Now().Before(deadline); n++ {
		if n > 0 || os.Getenv(EnvSeed) == "" {
			seed = randomSeed()
		}
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runSeed(t, tg, seed) })
	}
}

func randomSeed() uint64 {
	var b [8]byte
	_, _ = crand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:]) >> 1 // fits an int64 too
}

// suite is the state of one seed's run.
type suite struct {
	t     *testing.T
	tg    Target
	seed  uint64
	ctx   context.Context
	runID string
	stats stats
	// classes of failures, in order of appearance.
	classes map[string]*class
	order   []string
}

// stats are the counts of the summary line.
type stats struct {
	indices, docs, advertised, notAdvertised, pairs int
	filters, idChecks, legit, refusals, failures    int
	// calls and wait are the Retrieve calls and the time spent in them.
	calls int
	wait  time.Duration
}

// class is one kind of failure: how often, with which operators, the
// report printed first and the simplest seen (fewest leaves).
type class struct {
	n                int
	ops              []string
	printed, example string
	leaves           int
}

// finding is one failure: its class (what went wrong on which field
// kind), the operator involved and the full report.
type finding struct {
	class, op, detail string
}

func runSeed(t *testing.T, tg Target, seed uint64) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	var id [4]byte
	_, _ = crand.Read(id[:])
	s := &suite{t: t, tg: tg, seed: seed, ctx: ctx, runID: hex.EncodeToString(id[:]), classes: map[string]*class{}}
	for i, plan := range plans {
		s.round(i, plan)
	}
	st := s.stats
	t.Logf("filterdiff %s seed=%d (%s): %d indices, %d documents; fields advertised %d, not advertised %d; (field,op) pairs %d; "+
		"filters run %d (%d id checks, %d refusal checks, of which %d of advertised pairs RCP lets the sidecar refuse); failures %d in %d classes; "+
		"%d retrieve calls, %s in them; %s",
		tg.Engine, seed, s.reproduce(), st.indices, st.docs, st.advertised, st.notAdvertised, st.pairs, st.filters, st.idChecks,
		st.refusals+st.legit, st.legit, st.failures, len(s.order), st.calls, st.wait.Round(time.Second), time.Since(start).Round(time.Second))
	for _, name := range s.order {
		c := s.classes[name]
		t.Logf("failure class %q: %d failures, operators %v", name, c.n, c.ops)
		if c.example != c.printed {
			t.Logf("simplest example of %q:\n%s", name, c.example)
		}
	}
}

// reproduce is the command that reruns this seed.
func (s *suite) reproduce() string {
	return fmt.Sprintf("%s=%d go test -count=1 -run '%s' %s", EnvSeed, s.seed, s.tg.Test, s.tg.Package)
}

// fail records a failure and prints the first of its class in full;
// leaves is the size of its filter (the smallest example of a class is
// kept for the summary).
func (s *suite) fail(f finding, leaves int) {
	s.stats.failures++
	c := s.classes[f.class]
	if c == nil {
		c = &class{example: f.detail, leaves: leaves}
		s.classes[f.class] = c
		s.order = append(s.order, f.class)
		if len(s.order) <= printTotal {
			c.printed = f.detail
			s.t.Errorf("%s (%s)\n%s", f.class, f.op, f.detail)
		}
	} else if leaves < c.leaves {
		c.example, c.leaves = f.detail, leaves
	}
	if f.op != "" && !slices.Contains(c.ops, f.op) {
		c.ops = append(c.ops, f.op)
	}
	c.n++
}

// round generates, indexes and checks one round.
func (s *suite) round(i int, plan roundPlan) {
	t := s.t
	g := newGen(s.seed, i)
	prefix := fmt.Sprintf("rcp-fd-%s-%d", s.runID, i)
	r := newRound(g, plan, s.tg.Features, prefix)
	if err := r.prepare(); err != nil {
		t.Fatalf("round %d: generated an unreadable document: %v", i, err)
	}
	for _, ix := range r.Indices {
		if err := s.tg.CreateIndex(s.ctx, ix.Name, ix.Body); err != nil {
			t.Fatalf("round %d: create index %s: %v", i, ix.Name, err)
		}
		if os.Getenv(EnvKeep) == "" {
			defer s.tg.DeleteIndex(ix.Name)
		}
	}
	if r.Alias {
		var actions []any
		for _, ix := range r.Indices {
			actions = append(actions, map[string]any{"add": map[string]any{"index": ix.Name, "alias": r.Target}})
		}
		b, _ := json.Marshal(map[string]any{"actions": actions})
		if _, err := s.post("/_aliases", "application/json", b); err != nil {
			t.Fatalf("round %d: alias: %v", i, err)
		}
	}
	if err := s.bulk(r); err != nil {
		t.Fatalf("round %d: %v", i, err)
	}
	s.stats.indices += len(r.Indices)
	s.stats.docs += len(r.Docs)
	a, err := s.tg.Open(s.ctx, r.Target, bodyField)
	if err != nil {
		t.Fatalf("round %d: open %s: %v", i, r.Target, err)
	}
	defer a.Close()
	e, err := retrieval.NewEngine(s.ctx, a, retrieval.Options{Name: "filterdiff", CursorKeys: [][]byte{[]byte("filterdiff")}})
	if err != nil {
		t.Fatalf("round %d: engine: %v", i, err)
	}
	rs := &roundState{suite: s, r: r, i: i, e: e}
	if !rs.advertisement() {
		return
	}
	rs.fg = newFilterGen(g, r, rs.pairs)
	rs.run()
	rs.narrowed(a)
}

// post sends a request to the engine and fails on a non-2xx answer.
func (s *suite) post(path, contentType string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(s.ctx, http.MethodPost, strings.TrimRight(s.tg.URL, "/")+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err == nil && res.StatusCode/100 != 2 {
		err = fmt.Errorf("POST %s: HTTP %d: %.500s", path, res.StatusCode, data)
	}
	return data, err
}

// bulk indexes the round's documents raw, refreshing, and fails when the
// engine rejects any (the generator must only write what the mapping
// takes).
func (s *suite) bulk(r *Round) error {
	body, err := r.bulkBody()
	if err != nil {
		return err
	}
	data, err := s.post("/_bulk?refresh=true", "application/x-ndjson", body)
	if err != nil {
		return err
	}
	var res struct {
		Errors bool `json:"errors"`
		Items  []map[string]struct {
			ID    string          `json:"_id"`
			Error json.RawMessage `json:"error"`
		} `json:"items"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		return fmt.Errorf("bulk: %w", err)
	}
	if !res.Errors {
		return nil
	}
	var msgs []string
	for _, it := range res.Items {
		for _, v := range it {
			if len(v.Error) > 0 && len(msgs) < 5 {
				msgs = append(msgs, fmt.Sprintf("%s: %s (source %.600s)", v.ID, v.Error, r.source(v.ID)))
			}
		}
	}
	return fmt.Errorf("bulk: the engine rejected documents:\n%s", strings.Join(msgs, "\n"))
}

// source returns a document's source as JSON.
func (r *Round) source(id string) string {
	for _, d := range r.Docs {
		if d.ID == id {
			b, _ := json.Marshal(d.Source)
			return string(b)
		}
	}
	return "?"
}

// roundState is one round's engine and what it advertises.
type roundState struct {
	*suite
	r      *Round
	i      int
	e      *retrieval.Engine
	fg     *filterGen
	maxK   int
	ops    []string            // advertised operators
	adv    map[string]string   // advertised field → type
	serve  map[string][]string // advertised field → operators it serves
	pairs  [][2]string         // advertised pairs the oracle judges
	shrunk int
}

// header names the round in reports.
func (rs *roundState) header() string {
	return fmt.Sprintf("[%s seed=%d round=%d target=%s]\nreproduce: %s", rs.tg.Engine, rs.seed, rs.i, rs.r.Target, rs.reproduce())
}

// advertisement reads what the engine advertises, checks it against the
// generated mapping (types, the coverage guard) and collects the pairs to
// test. It reports false when nothing can be tested.
func (rs *roundState) advertisement() bool {
	caps := rs.e.Capabilities()
	if caps.Retrieve == nil || caps.Filter == nil {
		rs.fail(finding{class: "filter or retrieve not advertised", detail: rs.header()}, 0)
		return false
	}
	rs.maxK = caps.Retrieve.MaxK
	rs.ops = caps.Filter.Operators
	rs.adv = caps.Filter.Fields
	rs.serve = map[string][]string{}
	for _, name := range sortedKeys(rs.adv) {
		for _, op := range rs.e.FieldOps(name) {
			rs.serve[name] = append(rs.serve[name], string(op))
		}
	}
	for _, name := range rs.r.fieldNames() {
		if _, ok := rs.adv[name]; ok {
			rs.stats.advertised++
		} else {
			rs.stats.notAdvertised++
		}
	}
	for _, name := range sortedKeys(rs.adv) {
		typ := rs.adv[name]
		specs := rs.r.specs(name)
		detail := fmt.Sprintf("%s\nfield %s advertised as %s with operators %v\nmapping: %s", rs.header(), name, typ, rs.serve[name], rs.r.mappingJSON(name))
		switch {
		case len(specs) == 0:
			rs.fail(finding{class: "advertised a name that is no field: " + name, detail: detail}, 0)
			continue
		case slices.ContainsFunc(specs, func(f *Field) bool { return f.Class != specs[0].Class }):
			rs.fail(finding{class: "advertised despite conflicting mappings across indices: " + specs[0].Kind, detail: detail}, 0)
			continue
		case Class(typ) != specs[0].Class:
			rs.fail(finding{class: fmt.Sprintf("advertised as %s, mapped as %s: %s", typ, specs[0].Class, specs[0].Kind), detail: detail}, 0)
			continue
		}
		// The stored precision a client reads beside the type is the
		// mapping's: the oracle rounds with it.
		var want rcp.FieldPrecision
		if specs[0].Class == ClassFloat {
			want = rcp.FieldPrecision{Stored: specs[0].Prec, ScalingFactor: specs[0].Scale}
		}
		if got := caps.Filter.FieldPrecision[name]; got != want {
			rs.fail(finding{class: "declared stored precision differs from the mapping: " + specs[0].Kind,
				detail: fmt.Sprintf("%s\ndeclared %+v, mapped %+v", detail, got, want)}, 0)
		}
		for _, op := range rs.serve[name] {
			if slices.Contains(opsByClass[specs[0].Class], op) {
				rs.pairs = append(rs.pairs, [2]string{name, op})
			}
		}
	}
	rs.stats.pairs += len(rs.pairs)
	var not []string
	for _, name := range rs.r.fieldNames() {
		if _, ok := rs.adv[name]; !ok {
			not = append(not, name)
		}
	}
	rs.t.Logf("round %d (%s): %d fields advertised, %d pairs; not advertised: %v", rs.i, rs.r.Target, len(rs.adv), len(rs.pairs), not)
	for _, name := range rs.r.fieldNames() {
		f := rs.r.specs(name)[0]
		if !f.Core {
			continue
		}
		want := opsByClass[f.Class]
		var missing []string
		for _, op := range want {
			if !slices.Contains(rs.serve[name], op) {
				missing = append(missing, op)
			}
		}
		if rs.adv[name] != string(f.Class) || len(missing) > 0 {
			rs.fail(finding{class: "coverage: " + f.Kind + " is not advertised with every §8 operator",
				detail: fmt.Sprintf("%s\nfield %s: advertised as %q, lacking %v\nmapping: %s", rs.header(), name, rs.adv[name], missing, rs.r.mappingJSON(name))}, 0)
		}
	}
	return len(rs.pairs) > 0
}

// check is one filter to send and what must come back.
type check struct {
	node *Node
	// want is the refusal a filter with a non-advertised part must get;
	// nil for a filter over advertised pairs, judged by the oracle.
	want *wantErr
	// eng is the engine to ask (nil: the round's).
	eng *retrieval.Engine
}

// wantErr is an expected refusal.
type wantErr struct {
	code   rcp.Code
	field  string // data.field for -32602
	option string // data.option for -32005
	why    string // the class of the check
}

func (w *wantErr) String() string {
	if w.code == rcp.CodeOptionUnsupported {
		return fmt.Sprintf("%d with data.option %q", w.code, w.option)
	}
	return fmt.Sprintf("%d with data.field %q", w.code, w.field)
}

// run sends the round's checks: singles over every pair, random trees,
// and leaves that must be refused.
func (rs *roundState) run() {
	fg := rs.fg
	var checks []check
	for _, p := range rs.pairs {
		for k := range perPair {
			v := fg.value(p[0], p[1])
			if p[1] == "exists" {
				v = (k+rs.i)%2 == 0
			}
			checks = append(checks, check{node: Leaf(p[0], p[1], v)})
		}
	}
	for range trees {
		checks = append(checks, check{node: fg.tree(1)})
	}
	checks = append(checks, rs.refusalChecks()...)
	for _, c := range checks {
		rs.judge(c)
	}
}

// classOf is the class of a field name (keyword for names of no field).
func (rs *roundState) classOf(name string) Class {
	if specs := rs.r.specs(name); len(specs) > 0 {
		return specs[0].Class
	}
	return ClassKeyword
}

// refusalChecks are leaves the sidecar must refuse: on fields it does not
// advertise, with operators it does not advertise or the field does not
// serve, and with values of the wrong shape.
func (rs *roundState) refusalChecks() []check {
	fg := rs.fg
	var out []check
	invalid := func(n *Node, field, why string) {
		out = append(out, check{node: fg.wrap(n), want: &wantErr{code: rcp.CodeInvalidParams, field: "filter." + field, why: why}})
	}
	unsupported := func(n *Node, op, why string) {
		out = append(out, check{node: fg.wrap(n), want: &wantErr{code: rcp.CodeOptionUnsupported, option: op, why: why}})
	}
	var names []string
	for _, n := range append(rs.r.fieldNames(), rs.r.Names...) {
		if _, ok := rs.adv[n]; !ok && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, n := range names {
		for range 2 {
			op := rs.ops[fg.g.r.IntN(len(rs.ops))]
			invalid(Leaf(n, op, anyValue(op, rs.classOf(n))), n, "leaf on a field that is not advertised")
		}
	}
	for _, name := range sortedKeys(rs.adv) {
		for _, op := range rs.ops {
			if !slices.Contains(rs.serve[name], op) {
				invalid(Leaf(name, op, anyValue(op, rs.classOf(name))), name, "operator the field does not serve")
			}
		}
	}
	field := rs.pairs[0][0]
	for _, op := range []string{"regex", "prefix", "between", "EQ", "startsWith"} {
		unsupported(Leaf(field, op, "x"), op, "operator that is not advertised")
	}
	for _, op := range allOps {
		if !slices.Contains(rs.ops, op) {
			for _, p := range rs.pairs[:min(3, len(rs.pairs))] {
				unsupported(Leaf(p[0], op, anyValue(op, rs.classOf(p[0]))), op, "operator that is not advertised")
			}
		}
	}
	// One advertised field of each class, with a value of the wrong shape.
	done := map[Class]bool{}
	for _, p := range rs.pairs {
		c := rs.classOf(p[0])
		if done[c] || p[1] != "eq" {
			continue
		}
		done[c] = true
		bad := map[Class][]any{
			ClassKeyword: {json.Number("12"), true},
			ClassText:    {json.Number("12")},
			ClassInt:     {"12", json.Number("1.5"), json.Number("9007199254740993")},
			ClassFloat:   {"1.5", true},
			ClassDate:    {"yesterday", "2024-03-10T12:00:00", json.Number("1.5")},
			ClassBool:    {"true", json.Number("1")},
		}[c]
		for _, v := range bad {
			invalid(Leaf(p[0], "eq", v), p[0], "value of the wrong type")
		}
		invalid(Leaf(p[0], "in", []any{}), p[0], "value of the wrong type")
		invalid(Leaf(p[0], "in", anyValue("eq", c)), p[0], "value of the wrong type")
		invalid(Leaf(p[0], "exists", "yes"), p[0], "value of the wrong type")
	}
	return out
}

// narrowed checks a second engine on the same adapter whose policy
// removes two operators: a leaf using one is -32005, and filters over the
// remaining pairs still select what the oracle says.
func (rs *roundState) narrowed(a adapters.Adapter) {
	var removable []string
	for _, op := range rs.ops {
		if op != "exists" {
			removable = append(removable, op)
		}
	}
	if len(removable) < 2 {
		return
	}
	g := rs.fg.g
	g.r.Shuffle(len(removable), func(i, j int) { removable[i], removable[j] = removable[j], removable[i] })
	removed := removable[:2]
	var kept []filterlang.Op
	for _, op := range rs.ops {
		if !slices.Contains(removed, op) {
			kept = append(kept, filterlang.Op(op))
		}
	}
	e2, err := retrieval.NewEngine(rs.ctx, a, retrieval.Options{Name: "filterdiff", CursorKeys: [][]byte{[]byte("filterdiff")},
		Policy: capability.Policy{Operators: kept}})
	if err != nil {
		rs.t.Fatalf("round %d: narrowed engine: %v", rs.i, err)
	}
	all := rs.fg.pairs
	var pairs [][2]string
	for _, p := range all {
		if !slices.Contains(removed, p[1]) {
			pairs = append(pairs, p)
		}
	}
	if len(pairs) == 0 {
		return
	}
	var bad []*Node
	for _, op := range removed {
		if i := slices.IndexFunc(all, func(p [2]string) bool { return p[1] == op }); i >= 0 {
			bad = append(bad, Leaf(all[i][0], op, rs.fg.value(all[i][0], op)))
		}
	}
	rs.fg.pairs = pairs // wrappers and trees use the operators e2 kept
	defer func() { rs.fg.pairs = all }()
	for _, n := range bad {
		rs.judge(check{node: rs.fg.wrap(n), eng: e2, want: &wantErr{code: rcp.CodeOptionUnsupported, option: n.Op,
			why: "operator that policy removed"}})
	}
	for range 10 {
		rs.judge(check{node: rs.fg.tree(1), eng: e2})
	}
}

// retrieveAll runs n in sparse mode on the common token with k = maxK and
// follows nextCursor to the end, returning every id, sorted.
func (rs *roundState) retrieveAll(e *retrieval.Engine, n *Node) ([]string, error) {
	filter := n.String()
	var ids []string
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		body := fmt.Sprintf(`{"query":"doc","k":%d,"mode":"sparse","includeText":false,"filter":%s`, rs.maxK, filter)
		if cursor != "" {
			c, _ := json.Marshal(cursor)
			body += `,"cursor":` + string(c)
		}
		var p rcp.RetrieveParams
		if err := json.Unmarshal([]byte(body+"}"), &p); err != nil {
			return nil, fmt.Errorf("filterdiff: params: %w", err)
		}
		t0 := time.Now()
		res, err := e.Retrieve(rs.ctx, &p)
		rs.stats.calls++
		rs.stats.wait += time.Since(t0)
		if err != nil {
			return nil, err
		}
		for _, h := range res.Hits {
			if seen[h.ID] {
				return nil, fmt.Errorf("filterdiff: id %s returned twice (page %d)", h.ID, page)
			}
			seen[h.ID] = true
			ids = append(ids, h.ID)
		}
		if res.NextCursor == "" || len(res.Hits) == 0 {
			break
		}
		if page > len(rs.r.Docs) {
			return nil, errors.New("filterdiff: pages do not end")
		}
		cursor = res.NextCursor
	}
	slices.Sort(ids)
	return ids, nil
}

// kindOf names the field kind of a leaf's field for failure classes.
func (rs *roundState) kindOf(field string) string {
	if specs := rs.r.specs(field); len(specs) > 0 {
		return specs[0].Kind
	}
	return "no field"
}

// judge sends c and records a failure when the answer differs from what
// it must be. A failing tree is reduced to a leaf that fails alone, when
// one does.
func (rs *roundState) judge(c check) {
	eng := c.eng
	if eng == nil {
		eng = rs.e
	}
	f := rs.verdict(eng, c)
	if f == nil {
		return
	}
	leaves := c.node.Leaves()
	if len(leaves) > 1 && c.want == nil && rs.shrunk < shrinkLimit {
		rs.shrunk++
		for _, l := range leaves {
			if lf := rs.verdict(eng, check{node: l}); lf != nil {
				f.class, f.op = lf.class, lf.op
				f.detail += fmt.Sprintf("\nthe leaf %s alone fails too", l)
				break
			}
		}
	}
	rs.fail(*f, len(leaves))
}

// verdict sends c and returns the failure, or nil when the answer is
// right: the refusal a check wants; for a filter over advertised pairs,
// -32602 on a refusable leaf's field when one is refusable (Refusable),
// else exactly the oracle's ids.
func (rs *roundState) verdict(eng *retrieval.Engine, c check) *finding {
	rs.stats.filters++
	ids, err := rs.retrieveAll(eng, c.node)
	var re *rcp.Error
	errors.As(err, &re)
	detail := fmt.Sprintf("%s\nfilter: %s\nmapping: %s", rs.header(), c.node, rs.mappings(c.node))
	got := func() string {
		if err != nil {
			return "got error: " + errText(err)
		}
		return fmt.Sprintf("got %d ids: %s", len(ids), trim(ids))
	}
	leaves := c.node.Leaves()
	// The leaf a failure is about: the only one, or the one an error names.
	about := leaves[0]
	if re != nil && re.Data != nil {
		for _, l := range leaves {
			if "filter."+l.Field == re.Data.Field {
				about = l
				break
			}
		}
	}
	kind := rs.kindOf(about.Field)
	if len(leaves) > 1 && (re == nil || re.Data == nil || "filter."+about.Field != re.Data.Field) {
		kind = "tree"
	}
	if c.want != nil {
		rs.stats.refusals++
		ok := re != nil && re.Code == c.want.code
		if ok && re.Code == rcp.CodeInvalidParams {
			ok = re.Data != nil && re.Data.Field == c.want.field
		}
		if ok && re.Code == rcp.CodeOptionUnsupported {
			ok = re.Data != nil && re.Data.Option == c.want.option
		}
		if ok {
			return nil
		}
		return &finding{class: "wrong answer to a " + c.want.why, detail: fmt.Sprintf("%s\nwant refusal %s\n%s", detail, c.want, got())}
	}
	reasons := map[string]string{}
	var first *Node
	for _, l := range leaves {
		if why := rs.r.Refusable(l); why != "" {
			reasons["filter."+l.Field] = why
			if first == nil {
				first = l
			}
		}
	}
	if first != nil {
		rs.stats.legit++
		if re != nil && re.Code == rcp.CodeInvalidParams && re.Data != nil && reasons[re.Data.Field] != "" {
			return nil
		}
		why := reasons["filter."+first.Field]
		cause := strings.Fields(why)[0]
		if cause == "value" {
			cause = "ignore_above"
		}
		want := fmt.Sprintf("want refusal -32602 on one of %v (%s)", sortedKeys(reasons), why)
		if err == nil {
			return &finding{class: fmt.Sprintf("not refused (%s): %s", cause, rs.kindOf(first.Field)), op: first.Op,
				detail: fmt.Sprintf("%s\n%s\n%s%s", detail, want, got(), rs.diff(c.node, ids))}
		}
		return &finding{class: fmt.Sprintf("wrong refusal (%s): %s", cause, rs.kindOf(first.Field)), op: first.Op,
			detail: fmt.Sprintf("%s\n%s\n%s", detail, want, got())}
	}
	rs.stats.idChecks++
	if err != nil {
		code := "error"
		if re != nil {
			code = fmt.Sprintf("error %d %q", re.Code, re.Message)
		}
		return &finding{class: code + ": " + kind, op: opOf(kind, about), detail: fmt.Sprintf("%s\nwant the oracle's ids\n%s", detail, got())}
	}
	want, oerr := rs.r.Expected(c.node)
	if oerr != nil {
		rs.t.Fatalf("oracle: %v (filter %s)", oerr, c.node)
	}
	if slices.Equal(ids, want) {
		return nil
	}
	return &finding{class: "wrong ids: " + kind, op: opOf(kind, about),
		detail: fmt.Sprintf("%s\nexpected %d ids: %s\n%s%s", detail, len(want), trim(want), got(), rs.diff(c.node, ids))}
}

// opOf is the operator a failure is about: none for a whole tree.
func opOf(kind string, about *Node) string {
	if kind == "tree" {
		return ""
	}
	return about.Op
}

// errText renders an engine error with its code and data.
func errText(err error) string {
	var re *rcp.Error
	if errors.As(err, &re) {
		b, _ := json.Marshal(re.Data)
		return fmt.Sprintf("%d %s data=%s", re.Code, re.Message, b)
	}
	return err.Error()
}

// trim renders at most 12 ids.
func trim(ids []string) string {
	if len(ids) <= 12 {
		return fmt.Sprint(ids)
	}
	return fmt.Sprintf("%v … (%d more)", ids[:12], len(ids)-12)
}

// mappings renders the mapping of every field of n.
func (rs *roundState) mappings(n *Node) string {
	var parts []string
	for _, f := range n.fields() {
		parts = append(parts, f+": "+rs.r.mappingJSON(f))
	}
	return strings.Join(parts, "; ")
}

// diff names up to three missing and three unexpected documents with the
// source values of n's fields.
func (rs *roundState) diff(n *Node, got []string) string {
	want, _ := rs.r.Expected(n)
	var missing, extra []string
	for _, id := range want {
		if !slices.Contains(got, id) {
			missing = append(missing, id)
		}
	}
	for _, id := range got {
		if !slices.Contains(want, id) {
			extra = append(extra, id)
		}
	}
	var b strings.Builder
	for _, grp := range []struct {
		label string
		ids   []string
	}{{"missing", missing}, {"unexpected", extra}} {
		for _, id := range grp.ids[:min(3, len(grp.ids))] {
			fmt.Fprintf(&b, "\n%s %s: %s", grp.label, id, rs.values(id, n))
		}
		if len(grp.ids) > 3 {
			fmt.Fprintf(&b, "\n… %d more %s", len(grp.ids)-3, grp.label)
		}
	}
	return b.String()
}

// values renders the source values of n's fields in document id.
func (rs *roundState) values(id string, n *Node) string {
	for _, d := range rs.r.Docs {
		if d.ID != id {
			continue
		}
		var parts []string
		for _, name := range n.fields() {
			f := rs.r.Indices[d.Index].Fields[name]
			if f == nil {
				parts = append(parts, name+" (not in "+rs.r.Indices[d.Index].Name+")")
				continue
			}
			var vs []any
			for _, p := range f.Sources {
				vs = append(vs, rawValues(d.Source, p)...)
			}
			b, _ := json.Marshal(vs)
			parts = append(parts, name+"="+string(b))
		}
		return strings.Join(parts, " ")
	}
	return "?"
}

// rawValues are the source values at path, nulls kept, to show what a
// document holds.
func rawValues(src map[string]any, path string) []any {
	var out []any
	var walk func(v any, segs []string)
	walk = func(v any, segs []string) {
		switch x := v.(type) {
		case map[string]any:
			if len(segs) == 0 {
				out = append(out, x)
				return
			}
			for _, k := range sortedKeys(x) {
				ks := strings.Split(k, ".")
				if len(ks) <= len(segs) && slices.Equal(ks, segs[:len(ks)]) {
					walk(x[k], segs[len(ks):])
				}
			}
		case []any:
			if len(segs) == 0 {
				out = append(out, x)
				return
			}
			for _, e := range x {
				walk(e, segs)
			}
		default:
			if len(segs) == 0 {
				out = append(out, x)
			}
		}
	}
	walk(src, strings.Split(path, "."))
	return out
}
