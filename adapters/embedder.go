package adapters

import (
	"context"
	"fmt"
	"math"

	"github.com/rcp-sidecar/rcp-sidecar/capability"
)

// Embedder turns text into dense vectors. It powers the embed method and
// dense retrieval for adapters whose engine cannot embed the query itself.
// Implementations are safe for concurrent use.
type Embedder interface {
	// Embed returns one vector of Dimension() floats per text, in order.
	// kind is "query", "document" or "" (asymmetric models prefix
	// accordingly).
	Embed(ctx context.Context, texts []string, kind string) ([][]float32, error)
	// Dimension is the length of every returned vector.
	Dimension() int
	// Identity names the model, for embed.identity (§15.7).
	Identity() string
}

// Elementer is implemented by embedders whose vectors are not 32-bit
// floats. An Embedder without it produces capability.ElementFloat.
type Elementer interface {
	// Element is the type of every component Embed returns.
	Element() capability.Element
}

// ElementOf is the element type of emb's vectors ("" for no embedder).
func ElementOf(emb Embedder) capability.Element {
	if emb == nil {
		return ""
	}
	if e, ok := emb.(Elementer); ok {
		if el := e.Element(); el != "" {
			return el
		}
	}
	return capability.ElementFloat
}

// CheckElements reports the first component of v that is not a value of
// el: a non-finite float, or for capability.ElementInt8 a value that is not an
// integer in [-128, 127]. An engine refuses such a vector, and a sidecar
// that sent it would have built the request the engine refused.
func CheckElements(v []float32, el capability.Element) error {
	for i, x := range v {
		f := float64(x)
		switch {
		case math.IsNaN(f) || math.IsInf(f, 0):
			return fmt.Errorf("component %d is not finite", i)
		case el == capability.ElementInt8 && (f != math.Trunc(f) || f < -128 || f > 127):
			return fmt.Errorf("component %d (%g) is not an int8 integer in [-128, 127]", i, f)
		}
	}
	return nil
}
