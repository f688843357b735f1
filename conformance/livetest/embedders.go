package livetest

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/embedding"
)

// EmbedServer is the real embedding server of integration/embed: URL
// serves float embeddings, Int8URL the same model's int8 ones.
type EmbedServer struct {
	URL, Int8URL, Model string
	Dim                 int
	// InputType: the server applies the model's query/passage prefixes
	// itself, chosen by input_type.
	InputType bool
}

// RealEmbedServer reads the server from RCP_EMBED_URL, RCP_EMBED_INT8_URL,
// RCP_EMBED_MODEL, RCP_EMBED_DIM and RCP_EMBED_INPUT_TYPE (written by
// integration/embed/start.sh), or skips the test (fails it under
// RCP_REQUIRE_ENGINES).
func RealEmbedServer(t testing.TB) EmbedServer {
	t.Helper()
	s := EmbedServer{URL: os.Getenv("RCP_EMBED_URL"), Int8URL: os.Getenv("RCP_EMBED_INT8_URL"),
		Model: os.Getenv("RCP_EMBED_MODEL"), InputType: os.Getenv("RCP_EMBED_INPUT_TYPE") == "1"}
	if s.URL == "" || s.Int8URL == "" {
		if os.Getenv("RCP_REQUIRE_ENGINES") != "" {
			t.Fatal("RCP_EMBED_URL or RCP_EMBED_INT8_URL is unset but RCP_REQUIRE_ENGINES is set: run integration/embed/start.sh and source integration/.work/embed.env")
		}
		t.Skip("SKIPPING real embedding server test: RCP_EMBED_URL or RCP_EMBED_INT8_URL is unset (run integration/embed/start.sh)")
	}
	dim, err := strconv.Atoi(os.Getenv("RCP_EMBED_DIM"))
	if err != nil || dim <= 0 {
		t.Fatalf("RCP_EMBED_DIM=%q must be a positive integer", os.Getenv("RCP_EMBED_DIM"))
	}
	s.Dim = dim
	return s
}

// Open returns a probed OpenAI-compatible client of the server for
// element type el: URL for float embeddings, Int8URL for int8 ones.
func (s EmbedServer) Open(t testing.TB, el capability.Element) adapters.Embedder {
	t.Helper()
	url := s.URL
	if el == capability.ElementInt8 {
		url = s.Int8URL
	}
	o, err := embedding.NewOpenAI(embedding.OpenAIOptions{BaseURL: url, Model: s.Model, Dimension: s.Dim,
		SendInputType: s.InputType, Element: el, Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Probe(context.Background()); err != nil {
		t.Fatalf("%s embedder at %s: %v", el, url, err)
	}
	return o
}
