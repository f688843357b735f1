package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metricsql"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/memory"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/resilient"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/conformance/adaptertest"
	"github.com/rcp-sidecar/rcp-sidecar/internal/telemetry"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

const dashboardFile = "deploy/grafana/rcp-sidecar.json"

// targetLabels are the labels Prometheus adds to every scraped series; a
// dashboard may select and group by them although /metrics has none.
var targetLabels = []string{"job", "instance"}

// exported is what a scrape of /metrics yields: sample name → the label
// names its series carry (histograms as _bucket with le, _sum and _count;
// summaries with quantile, _sum and _count).
type exported map[string]map[string]bool

// failOn is a test adapter that fails, deterministically, every search
// whose query text contains trigger, classified as -32010 — so that the
// engine error counter has a series to scrape.
type failOn struct {
	adapters.Adapter
	trigger string
}

var errTriggered = errors.New("test adapter: search failed on purpose")

func (f failOn) Search(ctx context.Context, p *adapters.Plan) (*adapters.Candidates, error) {
	if strings.Contains(string(p.Body), f.trigger) {
		return nil, errTriggered
	}
	return f.Adapter.Search(ctx, p)
}

func (f failOn) ErrorCode(err error) rcp.Code {
	if errors.Is(err, errTriggered) {
		return rcp.CodeBackendUnavailable
	}
	return f.Adapter.ErrorCode(err)
}

// scrapeSidecar builds the sidecar's request path the way the binary
// does (telemetry decorators, the resilient wrapper with its breaker
// watched, the Engine over the memory engine), serves successful, refused
// and failed requests, and scrapes the real /metrics handler.
func scrapeSidecar(t *testing.T) exported {
	t.Helper()
	ctx := context.Background()
	tel, err := telemetry.New(ctx, telemetry.Options{ServiceName: "rcp-sidecar", Version: "dashboard-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tel.Shutdown(ctx) })
	emb := adaptertest.Embedder()
	store := memory.New(memory.Options{Dims: emb.Dimension(), Similarity: capability.SimCosine, Writable: true})
	for i, text := range []string{"comets grow tails near the sun", "a zebra grazes", "tails of comets point away"} {
		vs, _ := emb.Embed(ctx, []string{text}, "document")
		store.Add(adapters.Document{ID: fmt.Sprint("d", i), Text: text, Vector: vs[0]})
	}
	ra := resilient.New(tel.Adapter(failOn{Adapter: store, trigger: "kaboom"}, "docs"),
		resilient.Options{Name: "docs", Retries: -1, Timeout: 10 * time.Second})
	tel.WatchCircuit("docs", ra)
	eng, err := retrieval.NewEngine(ctx, ra.AsAdapter(), retrieval.Options{Name: "rcp-sidecar", Version: "0",
		Embedder: emb, Policy: capability.Policy{Writable: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	c := rcptest.NewClient(t, tel.Backend(eng, "docs"))
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	calls := []struct {
		params map[string]any
		code   rcp.Code // 0: success
	}{
		{map[string]any{"query": "comet tails", "k": 2, "mode": "hybrid"}, 0},
		{map[string]any{"query": "comet tails", "mode": "sparse"}, rcp.CodeInvalidParams}, // no k
		{map[string]any{"query": "kaboom", "k": 2, "mode": "sparse"}, rcp.CodeBackendUnavailable},
	}
	for _, call := range calls {
		_, rerr := c.Call(ctx, rcp.MethodRetrieve, call.params)
		if got := rcp.Code(0); rerr != nil {
			got = rerr.Code
			if got != call.code {
				t.Fatalf("retrieve %v: code %d, want %d", call.params, got, call.code)
			}
		} else if call.code != 0 {
			t.Fatalf("retrieve %v succeeded, want %d", call.params, call.code)
		}
	}
	ts := httptest.NewServer(tel.MetricsHandler())
	defer ts.Close()
	resp, err := http.Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return samples(fams)
}

// samples lists the sample names and label names of scraped families.
func samples(fams map[string]*dto.MetricFamily) exported {
	out := exported{}
	add := func(name string, labels []*dto.LabelPair, extra ...string) {
		if out[name] == nil {
			out[name] = map[string]bool{}
		}
		for _, l := range labels {
			out[name][l.GetName()] = true
		}
		for _, e := range extra {
			out[name][e] = true
		}
	}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			switch f.GetType() {
			case dto.MetricType_HISTOGRAM:
				add(name+"_bucket", m.GetLabel(), "le")
				add(name+"_sum", m.GetLabel())
				add(name+"_count", m.GetLabel())
			case dto.MetricType_SUMMARY:
				add(name, m.GetLabel(), "quantile")
				add(name+"_sum", m.GetLabel())
				add(name+"_count", m.GetLabel())
			default:
				add(name, m.GetLabel())
			}
		}
	}
	return out
}

// dashboardQuery is one PromQL expression of the dashboard and where it is.
type dashboardQuery struct{ where, expr string }

// grafanaVar matches a Grafana template variable ($name, ${name}, ${name:fmt}).
var grafanaVar = regexp.MustCompile(`\$(\w+)|\$\{(\w+)(?::\w+)?\}`)

// interpolate replaces Grafana's variables as Grafana would before the
// query reaches Prometheus: intervals by a duration, other variables
// (used in regex matchers) by a regex matching every value.
func interpolate(expr string) string {
	return grafanaVar.ReplaceAllStringFunc(expr, func(v string) string {
		name := strings.Trim(v, "${}")
		name, _, _ = strings.Cut(name, ":")
		if strings.HasPrefix(name, "__") {
			return "5m" // $__rate_interval, $__interval, $__range
		}
		return ".+"
	})
}

// labelValues matches a Grafana variable query label_values(selector, label).
var labelValues = regexp.MustCompile(`^label_values\((.+),\s*(\w+)\)$`)

// checkQuery parses q and returns what it asks of the exported metrics
// that they do not have: unknown metric names, matchers or groupings on
// labels no selected series carries, and range functions without a range.
func checkQuery(q string, ex exported) []string {
	expr, err := metricsql.Parse(interpolate(q))
	if err != nil {
		return []string{fmt.Sprintf("does not parse: %v", err)}
	}
	var problems []string
	findProblems(expr, ex, &problems)
	return problems
}

// findProblems appends to problems what expr asks of ex that it lacks.
func findProblems(expr metricsql.Expr, ex exported, problems *[]string) {
	has := func(names []string, label string) bool {
		if slices.Contains(targetLabels, label) {
			return true
		}
		for _, n := range names {
			if ex[n][label] {
				return true
			}
		}
		return false
	}
	metricsql.VisitAll(expr, func(e metricsql.Expr) {
		switch x := e.(type) {
		case *metricsql.MetricExpr:
			for _, lfs := range x.LabelFilterss {
				name := metricName(lfs)
				if name == "" {
					*problems = append(*problems, "a selector without a metric name")
					continue
				}
				if _, ok := ex[name]; !ok {
					*problems = append(*problems, fmt.Sprintf("metric %s is not exported", name))
					continue
				}
				for _, lf := range lfs {
					if lf.Label != "__name__" && !has([]string{name}, lf.Label) {
						*problems = append(*problems, fmt.Sprintf("%s has no label %s", name, lf.Label))
					}
				}
			}
		case *metricsql.AggrFuncExpr:
			names := selectedNames(x.Args...)
			for _, l := range x.Modifier.Args {
				if !has(names, l) {
					*problems = append(*problems, fmt.Sprintf("%s %s (%s): no series of %v has it", x.Name, x.Modifier.Op, l, names))
				}
			}
		case *metricsql.BinaryOpExpr:
			names := selectedNames(x.Left, x.Right)
			for _, l := range append(slices.Clone(x.GroupModifier.Args), x.JoinModifier.Args...) {
				if !has(names, l) {
					*problems = append(*problems, fmt.Sprintf("%s matching on %s: no series of %v has it", x.Op, l, names))
				}
			}
		case *metricsql.FuncExpr:
			switch x.Name {
			case "rate", "irate", "increase", "delta", "idelta", "deriv", "avg_over_time", "max_over_time":
				if r, ok := singleArg(x).(*metricsql.RollupExpr); !ok || r.Window == nil {
					*problems = append(*problems, fmt.Sprintf("%s without a range", x.Name))
				}
			}
		}
	})
}

func singleArg(f *metricsql.FuncExpr) metricsql.Expr {
	if len(f.Args) != 1 {
		return nil
	}
	return f.Args[0]
}

func metricName(lfs []metricsql.LabelFilter) string {
	for _, lf := range lfs {
		if lf.Label == "__name__" && !lf.IsRegexp && !lf.IsNegative {
			return lf.Value
		}
	}
	return ""
}

// selectedNames are the metric names the selectors under es ask for.
func selectedNames(es ...metricsql.Expr) []string {
	var out []string
	for _, e := range es {
		metricsql.VisitAll(e, func(x metricsql.Expr) {
			if me, ok := x.(*metricsql.MetricExpr); ok {
				for _, lfs := range me.LabelFilterss {
					out = append(out, metricName(lfs))
				}
			}
		})
	}
	return out
}

// dashboard is the part of Grafana's dashboard model the checks read.
type dashboard struct {
	UID        string  `json:"uid"`
	Title      string  `json:"title"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID         int    `json:"id"`
	Type       string `json:"type"`
	Title      string `json:"title"`
	Datasource *struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	} `json:"datasource"`
	GridPos struct{ H, W, X, Y int } `json:"gridPos"`
	Targets []struct {
		Expr  string `json:"expr"`
		RefID string `json:"refId"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	var d dashboard
	if err := json.Unmarshal(readFile(t, dashboardFile), &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

// queries lists every PromQL expression of the dashboard: panel targets
// and the selectors of label_values variable queries.
func queries(t *testing.T, d dashboard) []dashboardQuery {
	t.Helper()
	var out []dashboardQuery
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, tg := range p.Targets {
				out = append(out, dashboardQuery{fmt.Sprintf("panel %q %s", p.Title, tg.RefID), tg.Expr})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			t.Fatalf("variable %s: query is not {query: ...}: %s", v.Name, v.Query)
		}
		sub := labelValues.FindStringSubmatch(q.Query)
		if sub == nil {
			t.Fatalf("variable %s: %q is not label_values(selector, label)", v.Name, q.Query)
		}
		out = append(out, dashboardQuery{"variable " + v.Name, fmt.Sprintf("count by (%s) (%s)", sub[2], sub[1])})
	}
	return out
}

// TestDashboardQueriesMatchExportedMetrics parses every query of the
// Grafana dashboard with a PromQL parser and checks each metric and label
// it uses against a scrape of the sidecar's own /metrics.
func TestDashboardQueriesMatchExportedMetrics(t *testing.T) {
	ex := scrapeSidecar(t)
	qs := queries(t, loadDashboard(t))
	if len(qs) < 10 {
		t.Fatalf("%d queries in the dashboard, expected the full set", len(qs))
	}
	used := map[string]bool{}
	for _, q := range qs {
		for _, p := range checkQuery(q.expr, ex) {
			t.Errorf("%s: %s\n\t%s", q.where, p, q.expr)
		}
		if e, err := metricsql.Parse(interpolate(q.expr)); err == nil {
			for _, n := range selectedNames(e) {
				used[n] = true
			}
		}
	}
	// Every rcp_* family the sidecar exports is on the dashboard.
	for name := range ex {
		family := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
		if !strings.HasPrefix(name, "rcp_") || used[name] {
			continue
		}
		if !used[family+"_bucket"] && !used[family+"_count"] && !used[family] {
			t.Errorf("the dashboard shows nothing of %s", name)
		}
	}
}

// TestDashboardQueryCheckerRejects proves the check can fail: misspelt
// metrics, labels no series has, and a rate without a range are reported.
func TestDashboardQueryCheckerRejects(t *testing.T) {
	ex := exported{
		"rcp_requests_total":                  {"method": true, "code": true, "engine": true},
		"rcp_request_duration_seconds_bucket": {"method": true, "engine": true, "le": true},
	}
	tests := []struct{ expr, want string }{
		{`sum(rate(rcp_request_total[5m]))`, "rcp_request_total is not exported"},
		{`sum by (backend) (rate(rcp_requests_total[5m]))`, "by (backend)"},
		{`rcp_requests_total{tenant="a"}`, "has no label tenant"},
		{`histogram_quantile(0.9, sum by (le) (rate(rcp_request_duration_seconds[5m])))`, "rcp_request_duration_seconds is not exported"},
		{`rate(rcp_requests_total)`, "rate without a range"},
		{`rcp_requests_total / on (op) rcp_requests_total`, "matching on op"},
		{`sum(rate(rcp_requests_total[5m])`, "does not parse"},
	}
	for _, tc := range tests {
		got := checkQuery(tc.expr, ex)
		if !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, tc.want) }) {
			t.Errorf("%s: problems %q, want one mentioning %q", tc.expr, got, tc.want)
		}
	}
	if got := checkQuery(`sum by (job, engine) (rate(rcp_requests_total{job=~"$job",engine=~"${engine}"}[$__rate_interval]))`, ex); len(got) != 0 {
		t.Errorf("a valid query was rejected: %q", got)
	}
}

// TestDashboardLayout: the dashboard imports cleanly — a uid, unique
// panel ids, every panel on the Prometheus data source variable, inside
// Grafana's 24-column grid, with unique refIds.
func TestDashboardLayout(t *testing.T) {
	d := loadDashboard(t)
	if d.UID == "" || d.Title == "" {
		t.Error("dashboard has no uid or title")
	}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
	}
	if vars["datasource"] != "datasource" {
		t.Error("no datasource variable: the dashboard would be bound to one Grafana's data source uid")
	}
	ids := map[int]bool{}
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if ids[p.ID] {
				t.Errorf("panel id %d used twice", p.ID)
			}
			ids[p.ID] = true
			if p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X+p.GridPos.W > 24 {
				t.Errorf("panel %q: gridPos %+v outside the 24-column grid", p.Title, p.GridPos)
			}
			if p.Type != "row" {
				if p.Datasource == nil || p.Datasource.Type != "prometheus" || p.Datasource.UID != "${datasource}" {
					t.Errorf("panel %q: datasource %+v, want prometheus ${datasource}", p.Title, p.Datasource)
				}
				refs := map[string]bool{}
				for _, tg := range p.Targets {
					if refs[tg.RefID] || tg.RefID == "" {
						t.Errorf("panel %q: refId %q empty or repeated", p.Title, tg.RefID)
					}
					refs[tg.RefID] = true
				}
				if len(p.Targets) == 0 {
					t.Errorf("panel %q has no query", p.Title)
				}
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	if len(ids) == 0 {
		t.Error("no panels")
	}
}
