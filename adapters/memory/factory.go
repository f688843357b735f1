package memory

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
)

// Config is the memory engine's backend settings.
type Config struct {
	// Corpus is a JSONL file in BEIR shape loaded at Open; empty starts empty.
	Corpus string `mapstructure:"corpus"`
	// K1 and B are the BM25 parameters (defaults 1.2 and 0.75, set by
	// NewConfig); an explicit 0 is honoured (b=0: no length normalisation).
	K1 float64 `mapstructure:"k1"`
	B  float64 `mapstructure:"b"`
	// Dims is the stored vector dimension; 0 means no vector field.
	Dims int `mapstructure:"dims"`
	// Similarity is "cosine" (default) or "dot".
	Similarity string `mapstructure:"similarity"`
	// Writable enables index/add and index/delete.
	Writable bool `mapstructure:"writable"`
	// Analyzer is "standard" (default: no stemming) or "english" (Snowball
	// English stemming, so "comets" matches "comet").
	Analyzer string `mapstructure:"analyzer"`
	// StopWords drops English stop words; it needs analyzer "english".
	StopWords bool `mapstructure:"stop_words"`
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	switch {
	case c.K1 < 0:
		return errors.New("memory: k1 must be >= 0")
	case c.B < 0 || c.B > 1:
		return errors.New("memory: b must be in [0,1]")
	case c.Dims < 0:
		return errors.New("memory: dims must be >= 0")
	case c.Similarity != "" && c.Similarity != string(capability.SimCosine) && c.Similarity != string(capability.SimDot):
		return fmt.Errorf("memory: similarity %q must be cosine or dot", c.Similarity)
	}
	a, err := parseAnalyzer(c.Analyzer)
	if err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	if c.StopWords && a != AnalyzerEnglish {
		return errors.New("memory: stop_words needs analyzer english")
	}
	return nil
}

// Factory registers the memory engine under the name "memory".
var Factory = adapters.Factory{
	Name: "memory",
	NewConfig: func() adapters.Config {
		return &Config{K1: 1.2, B: 0.75, Similarity: string(capability.SimCosine), Analyzer: string(AnalyzerStandard)}
	},
	Open: adapters.Validating(open),
}

func open(ctx context.Context, cfg adapters.Config, d adapters.Deps) (adapters.Adapter, error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, fmt.Errorf("memory: config type %T", cfg)
	}
	if d.TenantIndex != nil {
		return nil, errors.New("memory: tenancy mode index is not supported; use mode shared")
	}
	s := New(Options{K1: c.K1, B: c.B, ExplicitBM25: true, Dims: c.Dims, Similarity: capability.Similarity(c.Similarity), Writable: c.Writable,
		Analyzer: Analyzer(c.Analyzer), StopWords: c.StopWords})
	if c.Corpus == "" {
		return s, nil
	}
	f, err := os.Open(c.Corpus)
	if err != nil {
		return nil, fmt.Errorf("memory: corpus: %w", err)
	}
	defer f.Close()
	if err := s.LoadJSONL(f); err != nil {
		return nil, err
	}
	return s, ctx.Err()
}
