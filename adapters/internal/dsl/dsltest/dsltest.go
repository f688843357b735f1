// Package dsltest writes seeded Elasticsearch/OpenSearch `_search`
// replies for tests that compare two ways of reading them: hits whose
// _source mixes the fields an adapter interprets (content, title, URI,
// document id, vectors; sometimes of the wrong type or repeated) with
// generated metadata (rcptest.JSONGen), repeated and null _source
// members, hits without one. The same seed writes the same reply. Answer
// and Materialize put the candidates read from a reply in the forms such
// tests compare.
package dsltest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
)

// Fields names the _source members a reply gives meaning to.
type Fields struct {
	Content, Title, URI, DocID string
	Vectors                    []string
	// Dims is the length of the vectors written (0 means 4).
	Dims int
}

// Seeds are the seeds a differential test over replies runs: 0 to n-1,
// or the one RCP_REPLY_SEED names (a failure's repro).
func Seeds(t testing.TB, n uint64) []uint64 {
	t.Helper()
	if env := os.Getenv("RCP_REPLY_SEED"); env != "" {
		seed, err := strconv.ParseUint(env, 10, 64)
		if err != nil {
			t.Fatalf("RCP_REPLY_SEED: %v", err)
		}
		return []uint64{seed}
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(i)
	}
	return out
}

// Reply writes one _search reply of up to maxHits hits.
func Reply(seed uint64, f Fields, maxHits int) []byte {
	g := rcptest.NewJSONGen(seed)
	r := g.R
	var b strings.Builder
	b.WriteString(`{"took":3,"timed_out":false,"_shards":{"total":1,"successful":1,"skipped":0,"failed":0},"hits":{"total":{"value":`)
	n := r.IntN(maxHits + 1)
	fmt.Fprintf(&b, `%d,"relation":"eq"},"max_score":1.5,"hits":[`, n)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"_index":"idx","_id":"d%d","_score":%s`, i, strconv.FormatFloat(r.Float64()*10, 'g', -1, 64))
		switch k := r.IntN(12); {
		case k == 0: // no _source
		case k == 1:
			b.WriteString(`,"_source":null`)
		case k == 2: // a repeated _source adds to the first
			b.WriteString(`,"_source":` + Source(g, f) + `,"_source":` + Source(g, f))
		default:
			b.WriteString(`,"_source":` + Source(g, f))
		}
		if r.IntN(3) == 0 && f.Content != "" {
			fmt.Fprintf(&b, `,"highlight":{%q:["%s"]}`, f.Content, []string{"quick", "a", "zz"}[r.IntN(3)])
		}
		b.WriteByte('}')
	}
	b.WriteString(`]}}`)
	return []byte(b.String())
}

// Source writes one _source object: generated metadata members and, in
// random order, most of the fields f names, their text sometimes "the
// quick brown fox, a N" (which a test can query), sometimes of the wrong
// type or repeated.
func Source(g *rcptest.JSONGen, f Fields) string {
	r := g.R
	var members []string
	add := func(name, value string) { members = append(members, strconv.Quote(name)+":"+value) }
	for range r.IntN(8) {
		members = append(members, g.Key()+":"+string(g.Value()))
	}
	str := func() string {
		if r.IntN(8) == 0 {
			return string(g.Value()) // the wrong type, sometimes
		}
		if r.IntN(2) == 0 {
			return `"the quick brown fox, a ` + strconv.Itoa(r.IntN(100)) + `"`
		}
		return g.String()
	}
	for _, name := range []string{f.Content, f.Title, f.URI, f.DocID} {
		if name != "" && r.IntN(5) > 0 {
			add(name, str())
			if r.IntN(10) == 0 {
				add(name, str()) // repeated
			}
		}
	}
	dims := f.Dims
	if dims == 0 {
		dims = 4
	}
	for _, name := range f.Vectors {
		if r.IntN(3) > 0 {
			xs := make([]string, dims)
			for i := range xs {
				xs[i] = strconv.FormatFloat(r.NormFloat64(), 'g', -1, 32)
			}
			add(name, "["+strings.Join(xs, ",")+"]")
		}
	}
	r.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
	return "{" + strings.Join(members, ",") + "}"
}

// StoreSources PUTs n documents whose _source Source writes (seeded with
// seed) at docs+"d000"…, as they are, and returns how many the engine
// stored: it refuses some (repeated keys, invalid UTF-8, a content field
// that is not text).
func StoreSources(ctx context.Context, t testing.TB, docs string, seed uint64, n int, f Fields) int {
	t.Helper()
	g := rcptest.NewJSONGen(seed)
	stored := 0
	for i := range n {
		status, err := Put(ctx, fmt.Sprintf("%sd%03d", docs, i), []byte(Source(g, f)))
		if err != nil {
			t.Fatal(err)
		}
		if status/100 == 2 {
			stored++
		}
	}
	return stored
}

// Put stores body at url with a PUT, as it is (a document whose bytes
// matter), and returns the status.
func Put(ctx context.Context, url string, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, nil
}

// Answer is the RCP answer carrying c's hits as the pipeline carries a
// candidate's fields (id, score, text, meta, vector, citation).
func Answer(c *adapters.Candidates) ([]byte, error) {
	res := &rcp.RetrieveResult{Hits: make([]rcp.Hit, 0, len(c.Hits))}
	for _, h := range c.Hits {
		hit := rcp.Hit{ID: h.ID, IDPlain: h.IDPlain, Score: h.Score, Text: h.Text, TextPlain: h.TextPlain, Meta: h.Meta, Citation: h.Citation}
		if hit.Citation == nil && h.Title != "" { // as the Engine cites it
			hit.Citation = &rcp.Citation{Title: h.Title, TitlePlain: h.TitlePlain}
		}
		if h.Vector != nil {
			hit.Vector = h.Vector
		}
		res.Hits = append(res.Hits, hit)
	}
	return res.AppendJSON(nil)
}

// SameAnswer fails t unless got (its metadata kept as spans) gives
// exactly the RCP answer want (decoded in full) gives, and unless the two
// are the same candidates once got's metadata is decoded; what names the
// case in the failure.
func SameAnswer(t testing.TB, got, want *adapters.Candidates, what string) {
	t.Helper()
	gotAns, gotErr := Answer(got)
	wantAns, wantErr := Answer(want)
	if gotErr != nil || wantErr != nil || string(gotAns) != string(wantAns) {
		t.Fatalf("%s: answers differ\n spans   %s (%v)\n decoded %s (%v)", what, gotAns, gotErr, wantAns, wantErr)
	}
	Materialize(got)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: candidates differ\n spans   %+v\n decoded %+v", what, got, want)
	}
}

// Materialize replaces every rcp.RawJSON meta value of c's hits by its
// decoded value (rcp.MetaValue) and drops what vouches for their id, text
// and title (rcp.Plain), for comparison with decoded candidates.
func Materialize(c *adapters.Candidates) {
	for i := range c.Hits {
		c.Hits[i].IDPlain, c.Hits[i].TextPlain, c.Hits[i].TitlePlain = rcp.Plain{}, rcp.Plain{}, rcp.Plain{}
		if cit := c.Hits[i].Citation; cit != nil {
			cit.TitlePlain = rcp.Plain{}
		}
		for k, v := range c.Hits[i].Meta {
			c.Hits[i].Meta[k] = rcp.MetaValue(v)
		}
	}
}
