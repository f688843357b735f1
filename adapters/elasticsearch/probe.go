package elasticsearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dsl"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/internal/dslfilter"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/mapping"
)

// probeState is what Plan and decoding need from the last probe.
type probeState struct {
	ev      *capability.Evidence
	fields  map[string]field
	content string
	// native maps an RCP filter field to the ES field it queries.
	native map[string]string
	// filters says how each offered filter field translates.
	filters map[string]dslfilter.Field
	// vectors are the usable dense_vector fields by name.
	vectors map[string]field
	// vindex is how each dense_vector field is indexed (vectors.go).
	vindex map[string]vectorIndex
	// docField is the document-id field (unit "document"), "" if none.
	docField string
	// vectorsOptIn: the engine leaves vector fields out of _source unless
	// a search asks for them (Elasticsearch 9+).
	vectorsOptIn bool
	// rerankID is the inference endpoint of the rerank stage, "" when the
	// stage cannot run in the engine (Evidence.NativeRerankStage).
	rerankID string
}

// facts are the cluster-level probe results.
type facts struct {
	version, flavor, licence string
	modules                  []string
	nodes                    int
	// rerank is the engine's reranker (rerank.go).
	rerank *rerankProbe
}

// Probe implements adapters.Adapter. Every call is a read.
func (a *adapter) Probe(ctx context.Context) (*capability.Evidence, error) {
	f, err := a.probeCluster(ctx)
	if err != nil {
		return nil, err
	}
	per, notes, filters, err := a.probeMappings(ctx)
	if err != nil {
		return nil, err
	}
	a.facts.Store(f)
	st := a.buildState(f, per, notes, filters)
	a.probeExtras(ctx, f, st.ev)
	a.mu.Lock()
	a.state = st
	a.mu.Unlock()
	return st.ev, nil
}

// rootInfo is the body of GET /.
type rootInfo struct {
	Version struct {
		Number       string `json:"number"`
		BuildFlavor  string `json:"build_flavor"`
		Distribution string `json:"distribution"`
	} `json:"version"`
}

// nodesInfo is the body of GET /_nodes/plugins.
type nodesInfo struct {
	Nodes map[string]struct {
		Version     string `json:"version"`
		BuildFlavor string `json:"build_flavor"`
		Modules     []struct {
			Name string `json:"name"`
		} `json:"modules"`
		Plugins []struct {
			Name string `json:"name"`
		} `json:"plugins"`
	} `json:"nodes"`
}

func (a *adapter) probeCluster(ctx context.Context) (*facts, error) {
	f := &facts{}
	var root rootInfo
	res, err := a.getJSON(ctx, "/", &root)
	switch {
	case err == nil:
		if root.Version.Distribution == "opensearch" || res.Header.Get("X-Elastic-Product") != "Elasticsearch" {
			return nil, fmt.Errorf("elasticsearch: %v is not Elasticsearch", a.cfg.URLs)
		}
		f.version, f.flavor = root.Version.Number, root.Version.BuildFlavor
	case !isStatus(err, 404, 405):
		return nil, err
	}
	// GET / is missing without the rest-root module (integ-test distribution).
	if err := a.probeNodes(ctx, f); err != nil {
		return nil, err
	}
	f.licence = a.probeLicence(ctx)
	f.rerank = a.probeReranker(ctx, f.licence)
	return f, nil
}

// probeNodes reads modules and plugins present on every node, and the
// version when GET / did not give it.
func (a *adapter) probeNodes(ctx context.Context, f *facts) error {
	var ni nodesInfo
	if _, err := a.getJSON(ctx, "/_nodes/plugins", &ni); err != nil {
		return err
	}
	count := map[string]int{}
	for _, n := range ni.Nodes {
		if f.version == "" {
			f.version, f.flavor = n.Version, n.BuildFlavor
		}
		for _, m := range n.Modules {
			count[m.Name]++
		}
		for _, p := range n.Plugins {
			count[p.Name]++
		}
	}
	f.nodes = len(ni.Nodes)
	for _, name := range sortedKeys(count) {
		if count[name] == f.nodes {
			f.modules = append(f.modules, name)
		}
	}
	return nil
}

// probeLicence returns the active licence type, or "" when it cannot be
// read (treated as basic).
func (a *adapter) probeLicence(ctx context.Context) string {
	var lic struct {
		License struct{ Type, Status string } `json:"license"`
	}
	if _, err := a.getJSON(ctx, "/_license", &lic); err != nil || lic.License.Status != "active" {
		a.log.Debug("licence not readable or inactive", "err", err)
		return ""
	}
	return lic.License.Type
}

// filterOptions are the Elasticsearch facts the filter analysis needs: it
// lists values dropped by ignore_above or ignore_malformed in _ignored.
var filterOptions = dslfilter.Options{IgnoredField: true}

// probeMappings reads the mapping of every concrete index behind the
// target (index, alias or pattern), or the configured tenant mapping, and
// which filters it answers exactly. Elasticsearch lists values dropped by
// ignore_above in _ignored.
func (a *adapter) probeMappings(ctx context.Context) (map[string]map[string]field, []string, *dslfilter.Fields, error) {
	if a.tenancy != nil {
		return a.configuredMapping()
	}
	var body json.RawMessage
	if _, err := a.getJSON(ctx, "/"+url.PathEscape(a.cfg.Index)+"/_mapping", &body); err != nil {
		return nil, nil, nil, err
	}
	m, err := mapping.Read(body)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("elasticsearch: %w", err)
	}
	if len(m.Indices) == 0 { // a pattern matching nothing
		return nil, nil, nil, &Error{Op: "GET mapping", Status: 404,
			Cause: &dsl.ErrorCause{Type: "index_not_found_exception", Reason: "no index matches the target"}}
	}
	per, notes := perIndex(m)
	return per, notes, dslfilter.Analyze(m, filterOptions), nil
}

// probeExtras adds the document count, determinism and inference
// endpoints; failures only add notes.
func (a *adapter) probeExtras(ctx context.Context, f *facts, ev *capability.Evidence) {
	if a.tenancy != nil {
		ev.Deterministic = a.configuredDeterminism(ev)
	} else {
		ev.Deterministic = a.probeDeterminism(ctx, ev)
	}
	var c struct {
		Count int64 `json:"count"`
	}
	if _, err := a.getJSON(ctx, "/"+url.PathEscape(a.cfg.Index)+"/_count", &c); err == nil {
		ev.DocCount = c.Count
	}
	if !slices.ContainsFunc(f.modules, func(m string) bool { return strings.Contains(m, "inference") }) {
		return
	}
	var inf struct {
		Endpoints []struct {
			ID       string `json:"inference_id"`
			TaskType string `json:"task_type"`
		} `json:"endpoints"`
	}
	if _, err := a.getJSON(ctx, "/_inference/_all", &inf); err != nil {
		ev.Notes = append(ev.Notes, "inference module present but endpoints not readable")
		return
	}
	for _, e := range inf.Endpoints {
		if e.TaskType == "rerank" {
			continue // the reranker's evidence says what became of these (rerank.go)
		}
		ev.Notes = append(ev.Notes, fmt.Sprintf("inference endpoint %s (%s) found; engine-side query embedding is not used", e.ID, e.TaskType))
	}
}

func isStatus(err error, codes ...int) bool {
	var e *Error
	return errors.As(err, &e) && slices.Contains(codes, e.Status)
}

// probeDeterminism: with one copy of every shard (no replicas) equal
// requests see the same statistics and tie order, so results repeat for
// an unchanged index (§7.7.1). Replicas may rank ties (and BM25 scores,
// through deleted-document counts) differently.
func (a *adapter) probeDeterminism(ctx context.Context, ev *capability.Evidence) bool {
	var body json.RawMessage
	if _, err := a.getJSON(ctx, "/"+url.PathEscape(a.cfg.Index)+"/_settings/index.number_of_replicas", &body); err != nil {
		return false
	}
	settings, err := mapping.ReadSettings(body)
	if err != nil || len(settings) == 0 {
		return false
	}
	for _, ix := range settings {
		if ix.Replicas != "0" {
			ev.Notes = append(ev.Notes, fmt.Sprintf("index %s has %s replica(s): repeated requests may order ties differently", ix.Name, ix.Replicas))
			return false
		}
	}
	for _, vf := range ev.VectorFields {
		if vf.Indexed {
			// Measured on SciFact: HNSW search over several segments returned
			// different neighbours for repeated identical kNN requests until
			// the index was merged to one segment.
			ev.Notes = append(ev.Notes, fmt.Sprintf("vector field %s is searched approximately (HNSW per segment): repeated kNN requests may return different neighbours", vf.Name))
			return false
		}
	}
	return true
}
