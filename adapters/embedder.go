package adapters

import "context"

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
