package beir

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
)

// envOf is a Locator.Env over a map (nothing from the real environment).
func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const (
	tinyCorpus  = `{"_id":"1","title":"t","text":"x"}` + "\n"
	tinyQueries = `{"_id":"q1","text":"x"}` + "\n"
	tinyQrels   = "query-id\tcorpus-id\tscore\nq1\t1\t1\n"
)

func TestRepoRoot(t *testing.T) {
	tmp := t.TempDir()
	writeFiles(t, tmp, map[string]string{
		"repo/go.mod":             "module " + modulePath + "\n\ngo 1.26\n",
		"repo/tools/other/go.mod": "module example.com/other\n",
	})
	deep := filepath.Join(tmp, "repo", "tools", "other", "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := RepoRoot(deep)
	if err != nil || got != filepath.Join(tmp, "repo") {
		t.Errorf("RepoRoot(%s) = %q, %v; want the directory of this module's go.mod", deep, got, err)
	}
	if _, err := RepoRoot(tmp); err == nil {
		t.Error("RepoRoot found a root above every go.mod")
	}
}

// TestLocateOrder: RCP_SCIFACT_DIR first (and an error when it is wrong),
// then shared/datasets/scifact beside the repository root.
func TestLocateOrder(t *testing.T) {
	tmp := t.TempDir()
	writeFiles(t, tmp, map[string]string{
		"clone/go.mod":                         "module " + modulePath + "\n",
		"shared/datasets/scifact/corpus.jsonl": tinyCorpus, "shared/datasets/scifact/queries.jsonl": tinyQueries,
		"shared/datasets/scifact/qrels/test.tsv": tinyQrels,
		"mine/corpus.jsonl.gz":                   "", "mine/queries.jsonl": "", "mine/qrels/test.tsv": "",
	})
	work := filepath.Join(tmp, "clone", "adapters", "x")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	l := Locator{WorkDir: work, Env: envOf(map[string]string{"RCP_CACHE": filepath.Join(tmp, "cache")}), URL: "http://127.0.0.1:1/none"}
	loc, err := l.Locate(context.Background())
	if want := filepath.Join(tmp, "shared", "datasets", "scifact"); err != nil || loc.Dir != want {
		t.Errorf("beside the repository: %+v, %v; want %s", loc, err, want)
	}
	ds, err := Load(loc.Dir) // a plain corpus.jsonl, as BEIR's zip has it
	if err != nil || len(ds.Docs) != 1 || len(ds.Queries) != 1 {
		t.Errorf("Load of a plain corpus: %+v, %v", ds, err)
	}

	l.Env = envOf(map[string]string{"RCP_SCIFACT_DIR": filepath.Join(tmp, "mine")})
	if loc, err := l.Locate(context.Background()); err != nil || loc.Dir != filepath.Join(tmp, "mine") {
		t.Errorf("RCP_SCIFACT_DIR: %+v, %v", loc, err)
	}
	l.Env = envOf(map[string]string{"RCP_SCIFACT_DIR": filepath.Join(tmp, "nowhere")})
	if _, err := l.Locate(context.Background()); err == nil || errors.Is(err, ErrNotAvailable) {
		t.Errorf("a wrong RCP_SCIFACT_DIR gave %v, want an error that is not ErrNotAvailable", err)
	}
}

// TestLocateNotAvailable: no copy anywhere and a download that fails or
// does not match the checksums is ErrNotAvailable, and leaves no files.
func TestLocateNotAvailable(t *testing.T) {
	bogus := zipOf(t, map[string]string{"scifact/corpus.jsonl": tinyCorpus, "scifact/queries.jsonl": tinyQueries, "scifact/qrels/test.tsv": tinyQrels})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/scifact.zip" {
			w.Write(bogus)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	for name, url := range map[string]string{
		"unreachable": "http://127.0.0.1:1/scifact.zip", "404": srv.URL + "/missing.zip", "checksum mismatch": srv.URL + "/scifact.zip",
	} {
		t.Run(name, func(t *testing.T) {
			cache := t.TempDir()
			l := Locator{WorkDir: t.TempDir(), Env: envOf(map[string]string{"RCP_CACHE": cache}), URL: url}
			_, err := l.Locate(context.Background())
			if !errors.Is(err, ErrNotAvailable) {
				t.Fatalf("got %v, want ErrNotAvailable", err)
			}
			if name == "checksum mismatch" && !strings.Contains(err.Error(), "checksums") {
				t.Errorf("error does not name the checksum mismatch: %v", err)
			}
			if err := hasDataset(filepath.Join(cache, "scifact")); err == nil {
				t.Error("an unverified download was left in the cache")
			}
		})
	}
}

// TestLocateDownloadsAndVerifies serves BEIR's zip layout built from the
// real SciFact files (when they are beside the repository): Locate
// downloads it into the cache, and the next Locate finds the verified
// cache without the network.
func TestLocateDownloadsAndVerifies(t *testing.T) {
	root, err := RepoRoot("")
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(filepath.Dir(root), "shared", "datasets", "scifact")
	if verifyDir(src) != nil {
		t.Skip("SKIPPED: no verified SciFact beside the repository to serve (" + src + ")")
	}
	files := map[string]string{}
	for name := range sciFactSHA256 {
		p := filepath.Join(src, filepath.FromSlash(name))
		gz := false
		if name == "corpus.jsonl" {
			p, gz = p+".gz", true
		}
		files["scifact/"+name] = readAll(t, p, gz)
	}
	files["scifact/qrels/train.tsv"] = "query-id\tcorpus-id\tscore\n"
	body := zipOf(t, files)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1); w.Write(body) }))
	defer srv.Close()

	cache := t.TempDir()
	writeFiles(t, cache, map[string]string{"scifact/model-384-prefix.jsonl": "{}\n"}) // a vector cache beside it
	l := Locator{WorkDir: t.TempDir(), Env: envOf(map[string]string{"RCP_CACHE": cache}), URL: srv.URL}
	loc, err := l.Locate(context.Background())
	if err != nil || loc.Dir != filepath.Join(cache, "scifact") || !strings.HasPrefix(loc.From, "downloaded") {
		t.Fatalf("download: %+v, %v", loc, err)
	}
	if _, err := os.Stat(filepath.Join(cache, "scifact", "model-384-prefix.jsonl")); err != nil {
		t.Errorf("the download removed the vector cache: %v", err)
	}
	l.URL = "http://127.0.0.1:1/unreachable"
	loc, err = l.Locate(context.Background())
	if err != nil || !strings.HasPrefix(loc.From, "verified cache") || hits.Load() != 1 {
		t.Fatalf("second Locate: %+v, %v (downloads: %d)", loc, err, hits.Load())
	}
	ds, err := Load(loc.Dir)
	if err != nil || len(ds.Docs) != 5183 || len(ds.Queries) != 300 {
		t.Errorf("the downloaded copy loads as %d docs, %d test queries (%v); want 5183, 300", len(ds.Docs), len(ds.Queries), err)
	}
}

func readAll(t *testing.T, path string, gz bool) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if gz {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		h := &zip.FileHeader{Name: name, Method: zip.Deflate}
		if len(body) > 1<<20 {
			h.Method = zip.Store // deflating the corpus is slow under -race; extraction handles both
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestGenerated(t *testing.T) {
	a, b := Generated(1, 300, 20), Generated(1, 300, 20)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed gave different datasets")
	}
	if reflect.DeepEqual(a.Docs, Generated(2, 300, 20).Docs) {
		t.Error("different seeds gave the same corpus")
	}
	if len(a.Docs) != 300 || len(a.Queries) != 20 || len(a.Qrels) != 0 {
		t.Fatalf("%d docs, %d queries, %d judged", len(a.Docs), len(a.Queries), len(a.Qrels))
	}
	for _, q := range a.Queries {
		words := strings.Fields(q.Text)
		if len(words) < 2 || len(words) > 4 {
			t.Errorf("query %s has %d words", q.ID, len(words))
		}
		found := false
		for _, d := range a.Docs {
			found = found || strings.Contains(" "+d.Text+" ", " "+words[0]+" ")
		}
		if !found {
			t.Errorf("query %s matches no document", q.ID)
		}
	}
}
