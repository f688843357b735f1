package opensearch

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
	"github.com/rcp-sidecar/rcp-sidecar/mapping"
)

// rootInfo is the part of GET / the probe reads.
type rootInfo struct {
	Version struct {
		Distribution string `json:"distribution"`
		Number       string `json:"number"`
	} `json:"version"`
}

// catPlugin is one row of GET /_cat/plugins?format=json.
type catPlugin struct {
	Component string `json:"component"`
	Version   string `json:"version"`
}

// Plugin component names as _cat/plugins reports them.
const (
	pluginKNN    = "opensearch-knn"
	pluginNeural = "opensearch-neural-search"
	pluginML     = "opensearch-ml"
)

// version is a parsed major.minor.patch.
type version struct{ Major, Minor, Patch int }

func parseVersion(s string) (version, error) {
	parts := strings.SplitN(strings.SplitN(s, "-", 2)[0], ".", 3)
	var v version
	dst := []*int{&v.Major, &v.Minor, &v.Patch}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return version{}, fmt.Errorf("opensearch: version %q: %w", s, err)
		}
		*dst[i] = n
	}
	return v, nil
}

// atLeast reports whether v >= major.minor.
func (v version) atLeast(major, minor int) bool {
	return v.Major > major || (v.Major == major && v.Minor >= minor)
}

// vectorInfo is what scoring needs to know about a knn_vector field.
type vectorInfo struct {
	Name     string
	Dims     int
	Space    string // l2, cosinesimil, innerproduct, l1, linf, hamming, hammingbit
	Engine   string // lucene, faiss, nmslib
	Method   string // hnsw, ivf
	DataType string // float, byte, binary
	Mode     string
	ModelID  string

	// Encoder and Compression describe vector quantisation (vectors.go).
	Encoder     string // method.parameters.encoder: name and type, e.g. "sq", "sq fp16"
	Compression string // compression_level, e.g. "1x", "32x"
}

// fields is the flattened, typed view of a mapping.
type fields struct {
	text    []string
	vectors map[string]vectorInfo
	// strings are all keyword and text fields, indexed or not (citation
	// title and URI candidates).
	strings map[string]filterlang.FieldType
	// leaves are every leaf field of the mapping (multi-fields and
	// nested objects excluded), sorted.
	leaves []string
	// notes are facts found while reading the mapping.
	notes     []string
	conflicts []string
}

// parseMappings flattens the mapping model (one or more indices behind
// an alias): every field outside nested objects, multi-fields and runtime
// fields excluded. A field whose type differs between indices is dropped
// and reported as a conflict.
func parseMappings(m *mapping.Mapping) *fields {
	f := &fields{vectors: map[string]vectorInfo{}, strings: map[string]filterlang.FieldType{}}
	seen := map[string]string{}
	for _, ix := range m.Indices {
		for i, p := range ix.Fields {
			if p.Nested != "" || p.MultiOf != "" || p.Runtime || p.Type == "object" && hasChildren(ix.Fields, i) {
				continue
			}
			f.add(p, seen)
		}
	}
	f.dropConflicts()
	sort.Strings(f.text)
	sort.Strings(f.leaves)
	return f
}

// hasChildren reports whether the object fields[i] has properties (which
// follow it in tree order).
func hasChildren(fields []mapping.Field, i int) bool {
	return i+1 < len(fields) && strings.HasPrefix(fields[i+1].Path, fields[i].Path+".") && fields[i+1].MultiOf == ""
}

func (f *fields) add(p mapping.Field, seen map[string]string) {
	path, kind := p.Path, p.Type
	if p.Type == "knn_vector" {
		vi := knnInfo(p.Vector)
		kind = fmt.Sprintf("knn_vector/%d/%s/%s/%s/%s", vi.Dims, vi.Space, vi.Engine, vi.DataType, vi.quantKey())
		f.vectors[path] = vi
	}
	if prev, ok := seen[path]; ok {
		if prev != kind {
			f.conflicts = append(f.conflicts, path)
		}
		return
	}
	seen[path] = kind
	if p.Leaf() {
		f.leaves = append(f.leaves, path)
	}
	switch p.Type {
	case "keyword":
		f.strings[path] = filterlang.TypeKeyword
	case "text":
		f.strings[path] = filterlang.TypeText
	}
	if !p.Indexed() {
		return // not searchable
	}
	if p.Type == "text" || p.Type == "match_only_text" {
		f.text = append(f.text, path)
	}
}

func (f *fields) dropConflicts() {
	for _, c := range f.conflicts {
		delete(f.vectors, c)
		for i, t := range f.text {
			if t == c {
				f.text = append(f.text[:i], f.text[i+1:]...)
				break
			}
		}
	}
	sort.Strings(f.conflicts)
}

// knnInfo reads a knn_vector field of the model with the k-NN plugin's
// defaults: engine faiss (2.18+), space l2 (hamming for binary),
// data_type float.
func knnInfo(v *mapping.Vector) vectorInfo {
	vi := vectorInfo{Dims: v.Dims, Space: v.Similarity, Mode: v.Mode, ModelID: v.ModelID, DataType: v.Element,
		Method: v.Method, Engine: v.Engine, Encoder: v.Encoder, Compression: v.Compression}
	if vi.DataType == "" {
		vi.DataType = "float"
	}
	if vi.Engine == "" {
		vi.Engine = "faiss"
	}
	if vi.Method == "" {
		vi.Method = "hnsw"
	}
	if vi.Space == "" {
		vi.Space = "l2"
		if vi.DataType == "binary" {
			vi.Space = "hamming"
		}
	}
	return vi
}

// similarity maps a k-NN space_type to the capability vocabulary.
func similarity(space string) capability.Similarity {
	switch space {
	case "cosinesimil":
		return capability.SimCosine
	case "innerproduct":
		return capability.SimDot
	case "l2":
		return capability.SimL2
	case "l1":
		return capability.SimManhattan
	}
	return capability.Similarity(space)
}

// settingsFacts summarises the settings of every index behind the target.
type settingsFacts struct {
	KNN bool
	// SingleCopy: one primary shard and no replicas in every index, so
	// equal requests see the same segments (§7.7.1 determinism).
	SingleCopy bool
}

func parseSettings(raw []byte) (settingsFacts, error) {
	byIndex, err := mapping.ReadSettings(raw)
	if err != nil {
		return settingsFacts{}, fmt.Errorf("opensearch: %w", err)
	}
	f := settingsFacts{KNN: len(byIndex) > 0, SingleCopy: len(byIndex) == 1}
	for _, ix := range byIndex {
		f.KNN = f.KNN && ix.KNN == "true"
		f.SingleCopy = f.SingleCopy && ix.Shards == "1" && ix.Replicas == "0"
	}
	return f, nil
}

// pipelineFacts lists stored search pipelines with hybrid processors.
type pipelineFacts struct {
	Normalization []string
	ScoreRanker   []string
}

func parsePipelines(raw []byte) (pipelineFacts, error) {
	var stored map[string]struct {
		Phase []map[string]json.RawMessage `json:"phase_results_processors"`
	}
	var pf pipelineFacts
	if len(raw) == 0 {
		return pf, nil
	}
	if err := json.Unmarshal(raw, &stored); err != nil {
		return pf, fmt.Errorf("opensearch: decode search pipelines: %w", err)
	}
	for id, p := range stored {
		for _, proc := range p.Phase {
			if _, ok := proc["normalization-processor"]; ok {
				pf.Normalization = append(pf.Normalization, id)
			}
			if _, ok := proc["score-ranker-processor"]; ok {
				pf.ScoreRanker = append(pf.ScoreRanker, id)
			}
		}
	}
	sort.Strings(pf.Normalization)
	sort.Strings(pf.ScoreRanker)
	return pf, nil
}

// mmrFactories reports whether the cluster setting enables the k-NN
// plugin's MMR system-generated processors (3.3+).
func mmrFactories(raw []byte) bool {
	var cs map[string]map[string]any
	if json.Unmarshal(raw, &cs) != nil {
		return false
	}
	const key = "cluster.search.enabled_system_generated_factories"
	for _, scope := range []string{"transient", "persistent", "defaults"} {
		if v, ok := cs[scope][key]; ok {
			return factoriesEnabled(v)
		}
	}
	return false
}

func factoriesEnabled(v any) bool {
	list, _ := v.([]any)
	var over, rerank bool
	for _, x := range list {
		s, _ := x.(string)
		over = over || s == "*" || s == "mmr_over_sample_factory"
		rerank = rerank || s == "*" || s == "mmr_rerank_factory"
	}
	return over && rerank
}
