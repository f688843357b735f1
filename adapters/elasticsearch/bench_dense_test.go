package elasticsearch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/embedding"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
	"github.com/rcp-sidecar/rcp-sidecar/retrieval"
)

// BenchmarkSidecarHTTPDense compares a sparse and a dense retrieve of
// k=10 passages through the same stack as BenchmarkSidecarHTTP: JSON-RPC
// over the RCP HTTP handler, the Engine, the adapter's request to and
// decoding of an Elasticsearch reply (a fake answering one fixed page of
// ten hits whatever the query). Dense also embeds the query through the
// OpenAI-compatible client (package embedding) and sends the vector in
// the kNN section; the two rows differ by what dense adds. The embedder
// is a fake answering one fixed, seeded 384-dimension float32 vector,
// run as a separate process (this test binary, by fakeEmbedderProcess)
// so that its CPU is not counted here, as the sidecar does not pay for
// its embedder's. The "embed" row is the embedding client alone, and
// "bare-roundtrip" a bare net/http client posting the same request
// bytes and reading the same answer: the part of the embed call that
// any HTTP embedder costs its client. "vector-json" writes the query
// vector as the kNN section holds it (encoding/json's shortest float32
// text, strconv): the part of building the engine request that the
// vector adds. Run with
//
//	go test -run '^$' -bench SidecarHTTPDense -benchmem ./adapters/elasticsearch/
//
// cpu-µs/op is this process's CPU time per operation: the client and
// the fake engine (the same in both retrieve rows) and the sidecar.
func BenchmarkSidecarHTTPDense(b *testing.B) {
	const dim = 384
	page := passagePage(10)
	probe := fakeRecorded(&testing.T{}, aliasRoutes)
	defer probe.Close()
	es := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/_search"):
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Elastic-Product", "Elasticsearch")
			_, _ = w.Write(page)
		case r.URL.Path == "/probe-fixture-a/_mapping":
			// The recorded mapping with its vector field at 384 dimensions.
			rec := httptest.NewRecorder()
			probe.Config.Handler.ServeHTTP(rec, r)
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write(bytes.Replace(rec.Body.Bytes(), []byte(`"dims":8,`), []byte(`"dims":384,`), 1))
		default:
			probe.Config.Handler.ServeHTTP(w, r)
		}
	}))
	defer es.Close()
	embedAnswer := fakeEmbedAnswer(dim)
	embedderURL, stop := startFakeEmbedder(b)
	defer stop()
	ctx := context.Background()
	emb, err := embedding.NewOpenAI(embedding.OpenAIOptions{BaseURL: embedderURL, Model: "bench", Dimension: dim, QueryPrefix: "query: "})
	if err != nil {
		b.Fatal(err)
	}
	cfg := fixtureConfig("probe-fixture-a")
	cfg.PIT, cfg.URLs, cfg.DisableCompression = false, []string{es.URL}, true
	cfg.TitleField, cfg.ContentField, cfg.VectorField = "title", "text", "vec"
	a, err := open(ctx, cfg, adapters.Deps{Embedder: emb})
	if err != nil {
		b.Fatal(err)
	}
	eng, err := retrieval.NewEngine(ctx, a, retrieval.Options{Embedder: emb})
	if err != nil {
		b.Fatal(err)
	}
	rcpSrv := httptest.NewServer(server.New(eng, server.Options{}).Handler())
	defer rcpSrv.Close()
	client := rcpSrv.Client()
	for _, mode := range []string{"sparse", "dense"} {
		b.Run(mode, func(b *testing.B) {
			frame := []byte(`{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"hypoxia signalling","k":10,"mode":"` + mode + `"}}`)
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				res, err := client.Post(rcpSrv.URL+"/rcp/retrieve", "application/json", bytes.NewReader(frame))
				if err != nil {
					b.Fatal(err)
				}
				out, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != 200 || !bytes.Contains(out, []byte(`"hits":[{`)) {
					b.Fatalf("HTTP %d: %.300s", res.StatusCode, out)
				}
			}
			b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
	b.Run("embed", func(b *testing.B) {
		b.ReportAllocs()
		cpu := processCPU()
		for b.Loop() {
			if _, err := emb.Embed(ctx, []string{"hypoxia signalling"}, embedding.KindQuery); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
	})
	b.Run("vector-json", func(b *testing.B) {
		vs, err := emb.Embed(ctx, []string{"hypoxia signalling"}, embedding.KindQuery)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		cpu := processCPU()
		for b.Loop() {
			if _, err := json.Marshal(vs[0]); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
	})
	b.Run("bare-roundtrip", func(b *testing.B) {
		body := []byte(`{"model":"bench","input":["query: hypoxia signalling"],"encoding_format":"float"}`)
		hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
		b.ReportAllocs()
		cpu := processCPU()
		for b.Loop() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, embedderURL+"/v1/embeddings", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			res, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			out, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if len(out) != len(embedAnswer) {
				b.Fatalf("read %d bytes", len(out))
			}
		}
		b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
	})
}

// fakeEmbedAnswer is an OpenAI /v1/embeddings answer holding one seeded
// unit vector of dim float32 components, written as encoding/json writes
// a []float32 (the shortest text that reads back to the same float32).
func fakeEmbedAnswer(dim int) []byte {
	r := rand.New(rand.NewPCG(384, 1))
	v := make([]float32, dim)
	var norm float64
	for i := range v {
		x := r.NormFloat64()
		v[i], norm = float32(x), norm+x*x
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(norm))
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	out, _ := json.Marshal(struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
	}{"list", []item{{"embedding", 0, v}}, "bench"})
	return out
}

// processCPU is the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// fakeEmbedderEnv makes this test binary serve fakeEmbedAnswer (TestMain).
const fakeEmbedderEnv = "RCP_BENCH_FAKE_EMBEDDER"

// TestMain runs the tests, or, in the process startFakeEmbedder starts,
// the fake embedder.
func TestMain(m *testing.M) {
	if os.Getenv(fakeEmbedderEnv) == "1" {
		fakeEmbedderProcess()
		return
	}
	os.Exit(m.Run())
}

// fakeEmbedderProcess answers every request with fakeEmbedAnswer(384) on
// a loopback port it prints, until its standard input closes.
func fakeEmbedderProcess() {
	answer := fakeEmbedAnswer(384)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().String())
	hs := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	})}
	go func() { _ = hs.Serve(ln) }()
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = hs.Close()
}

// startFakeEmbedder runs fakeEmbedderProcess in a child process and
// returns its URL and a function that stops it.
func startFakeEmbedder(b *testing.B) (string, func()) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fakeEmbedderEnv+"=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		b.Fatalf("fake embedder did not start: %v", err)
	}
	return "http://" + strings.TrimSpace(addr), func() { _ = in.Close(); _ = cmd.Wait() }
}
