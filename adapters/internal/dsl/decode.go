package dsl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// DecodeSearch reads a _search response in one pass (reader): the fields
// of SearchResponse, every other key validated and skipped. It accepts
// and rejects what json.Unmarshal into SearchResponse does, except that a
// JSON number for hits.total (rest_total_hits_as_int) is read as an exact
// count, that member names match exactly (Elasticsearch and OpenSearch
// never vary their case) and that a bare null is not a response.
func DecodeSearch(data []byte) (*SearchResponse, error) {
	return decodeSearch(&reader{b: data})
}

// DecodeSearchSpans is DecodeSearch, except that of each hit's _source
// only the members named in decoded become Go values: every other member
// is kept as an rcp.RawJSON slice of data, which the RCP encoder writes
// exactly as the decoded value would be written, so metadata that is only
// passed on is never built as Go values; a string without escapes
// (a hit's text, id, title) views data instead of copying it; and the
// string of decoded[0], the content, is vouched for (Hit.Plain) when it
// needs no JSON escaping, which the reader establishes on its way through
// it and the encoder then need not check again. It accepts
// and rejects exactly what DecodeSearch does. data must not change while
// the response or a value taken from it is in use.
func DecodeSearchSpans(data []byte, decoded []string) (*SearchResponse, error) {
	return decodeSearch(&reader{b: data, spans: true, decoded: decoded})
}

func decodeSearch(r *reader) (*SearchResponse, error) {
	sr := &SearchResponse{}
	err := r.object(func(key []byte) error {
		var err error
		switch string(key) {
		case "took":
			err = nullable(r, func() (e error) { sr.Took, e = r.int(); return })
		case "timed_out":
			err = nullable(r, func() (e error) { sr.TimedOut, e = r.boolean(); return })
		case "pit_id":
			err = nullable(r, func() (e error) { sr.PITID, e = r.str(); return })
		case "_shards":
			err = nullable(r, func() error { return r.shards(&sr.Shards) })
		case "hits":
			err = nullable(r, func() error { return r.hitsInfo(&sr.Hits) })
		default:
			err = r.skip()
		}
		return err
	})
	if err == nil {
		err = r.end()
	}
	if err != nil {
		return nil, fmt.Errorf("decode search response: %w", err)
	}
	return sr, nil
}

// nullable runs read unless the value is null, which leaves a string,
// number, bool or struct field as it is (as encoding/json does).
func nullable(r *reader, read func() error) error {
	if isNull, err := r.null(); isNull || err != nil {
		return err
	}
	return read()
}

// orNil is nullable for pointer, map and slice fields: null sets them to
// nil, as encoding/json does (a later duplicate key overrides an earlier).
func orNil(r *reader, reset func(), read func() error) error {
	if isNull, err := r.null(); isNull || err != nil {
		reset()
		return err
	}
	return read()
}

func (r *reader) smallInt(dst *int) error {
	return nullable(r, func() error {
		n, err := r.int()
		*dst = int(n)
		return err
	})
}

func (r *reader) shards(s *ShardInfo) error {
	return r.object(func(key []byte) error {
		switch string(key) {
		case "total":
			return r.smallInt(&s.Total)
		case "successful":
			return r.smallInt(&s.Successful)
		case "failed":
			return r.smallInt(&s.Failed)
		case "failures":
			return orNil(r, func() { s.Failures = nil }, func() error {
				s.Failures = []json.RawMessage{}
				return r.array(func() error {
					raw, err := r.raw()
					s.Failures = append(s.Failures, raw)
					return err
				})
			})
		}
		return r.skip()
	})
}

func (r *reader) hitsInfo(h *HitsInfo) error {
	return r.object(func(key []byte) error {
		switch string(key) {
		case "total":
			return orNil(r, func() { h.Total = nil }, func() error { return r.totalHits(&h.Total) })
		case "max_score":
			return orNil(r, func() { h.MaxScore = nil }, func() error {
				f, err := r.float()
				h.MaxScore = &f
				return err
			})
		case "hits":
			return orNil(r, func() { h.Hits = nil }, func() error {
				h.Hits = make([]Hit, 0, 16)
				start := r.i
				return r.array(func() error {
					if len(h.Hits) == cap(h.Hits) {
						h.Hits = slices.Grow(h.Hits, r.hitsToCome(len(h.Hits), start))
					}
					h.Hits = append(h.Hits, Hit{})
					return nullable(r, func() error { return r.hit(&h.Hits[len(h.Hits)-1]) })
				})
			})
		}
		return r.skip()
	})
}

// maxHitsGuess bounds hitsToCome's guess: hits cut short by a hostile
// reply cost at most this many unused Hit values.
const maxHitsGuess = 1024

// hitsToCome guesses how many elements follow the n of a hits array read
// from start: as many as the rest of the reply holds at the size of those
// (a page of k hits is then grown once to about k rather than doubled up
// to it), at least n (append's doubling) and at most maxHitsGuess more
// than that.
func (r *reader) hitsToCome(n, start int) int {
	guess := n*(len(r.b)-r.i)/max(r.i-start, 1) + 1
	return max(min(guess, maxHitsGuess), n)
}

func (r *reader) totalHits(dst **TotalHits) error {
	t := *dst
	if t == nil { // a repeated total updates the first (encoding/json)
		t = &TotalHits{}
		*dst = t
	}
	if c := r.ws(); c == '-' || '0' <= c && c <= '9' {
		n, err := r.int()
		t.Value, t.Relation = n, "eq"
		return err
	}
	return r.object(func(key []byte) error {
		switch string(key) {
		case "value":
			return nullable(r, func() (e error) { t.Value, e = r.int(); return })
		case "relation":
			return nullable(r, func() (e error) { t.Relation, e = r.str(); return })
		}
		return r.skip()
	})
}

func (r *reader) hit(h *Hit) error {
	return r.object(func(key []byte) error {
		switch string(key) {
		case "_index":
			return nullable(r, func() (e error) { h.Index, e = r.str(); return })
		case "_id":
			return nullable(r, func() (e error) { h.ID, e = r.vouchedStr(h); return })
		case "_score":
			return orNil(r, func() { h.Score = nil }, func() error {
				f, err := r.float()
				h.Score = r.float64Slot(f)
				return err
			})
		case "_source":
			return orNil(r, func() { h.Source = nil }, func() error {
				if r.ws() != '{' {
					return r.fail("_source is not an object")
				}
				m, err := r.source(h)
				if h.Source == nil { // a repeated _source adds to the first (encoding/json)
					h.Source = m
				} else {
					maps.Copy(h.Source, m)
				}
				return err
			})
		case "fields":
			return orNil(r, func() { h.Fields = nil }, func() error {
				if h.Fields == nil {
					h.Fields = map[string]json.RawMessage{}
				}
				return r.object(func(key []byte) error {
					raw, err := r.raw()
					h.Fields[string(key)] = raw
					return err
				})
			})
		case "highlight":
			return orNil(r, func() { h.Highlight = nil }, func() error {
				if h.Highlight == nil {
					h.Highlight = map[string][]string{}
				}
				return r.object(func(key []byte) error {
					var frags []string
					err := nullable(r, func() error {
						frags = []string{}
						return r.array(func() error {
							var s string
							err := nullable(r, func() (e error) { s, e = r.str(); return })
							frags = append(frags, s)
							return err
						})
					})
					h.Highlight[string(key)] = frags
					return err
				})
			})
		case "sort":
			return orNil(r, func() { h.Sort = nil }, func() (e error) { h.Sort, e = r.raw(); return })
		}
		return r.skip()
	})
}

// float64Slot returns a pointer to f carved from a block the reader
// allocates scoreBlock scores at a time, not one allocation per hit.
func (r *reader) float64Slot(f float64) *float64 {
	if len(r.floats) == cap(r.floats) {
		r.floats = make([]float64, 0, scoreBlock)
	}
	r.floats = append(r.floats, f)
	return &r.floats[len(r.floats)-1]
}

// scoreBlock is how many hit scores float64Slot allocates at once.
const scoreBlock = 32

// vouchedStr is str, except that a reader keeping spans records in h
// how the RCP encoder writes the string when it established that on the
// way (Hit.Plain).
func (r *reader) vouchedStr(h *Hit) (string, error) {
	if !r.spans {
		return r.str()
	}
	if r.ws() != '"' {
		return "", r.fail("expected a string")
	}
	s, p, err := r.plainStr()
	if p != (rcp.Plain{}) {
		h.vouch(p)
	}
	return s, err
}

// source reads a _source object: as json.Unmarshal into `any` would, or,
// when the reader keeps spans, the members not named in r.decoded as
// rcp.RawJSON slices of the input (checked as the decoder checks them),
// and the string members named there (content, title…) vouched for in h
// when they need no JSON escaping (Hit.Plain).
func (r *reader) source(h *Hit) (map[string]any, error) {
	if !r.spans {
		v, err := r.any()
		m, _ := v.(map[string]any)
		return m, err
	}
	m := map[string]any{}
	err := r.object(func(key []byte) error {
		name := r.name(key)
		if slices.Contains(r.decoded, name) {
			if r.ws() == '"' {
				s, err := r.vouchedStr(h)
				m[name] = s
				return err
			}
			v, err := r.any()
			m[name] = v
			return err
		}
		r.ws()
		start := r.i
		err := r.checkedSkip()
		m[name] = rcp.RawJSON(r.b[start:r.i:r.i])
		return err
	})
	return m, err
}

// ReadBody reads a response body of at most limit bytes into a buffer of
// exactly its size. A declared Content-Length sizes it at once; a chunked
// body (Elasticsearch sends search results chunked) is gathered in a
// pooled buffer and copied out, instead of doubling its way up through
// garbage (a search page with text is hundreds of kilobytes). A body
// longer than limit is cut at limit, as io.LimitReader would.
func ReadBody(body io.Reader, contentLength, limit int64) ([]byte, error) {
	if contentLength > 0 && contentLength <= limit {
		buf := make([]byte, contentLength, contentLength+1)
		if _, err := io.ReadFull(body, buf); err != nil {
			return nil, err
		}
		// A body longer than declared is the transport's error to report;
		// read on so that it is not silently truncated.
		rest, err := io.ReadAll(io.LimitReader(body, limit-contentLength))
		return append(buf, rest...), err
	}
	var out []byte
	err := withBody(body, limit, func(b []byte) error {
		out = bytes.Clone(b)
		return nil
	})
	return out, err
}

// withBody reads a body of at most limit bytes into a pooled buffer,
// passes it to use and takes the buffer back: use must not keep the slice.
func withBody(body io.Reader, limit int64, use func([]byte) error) error {
	buf := getBuffer()
	defer putBuffer(buf)
	if _, err := buf.ReadFrom(io.LimitReader(body, limit)); err != nil {
		return err
	}
	return use(buf.Bytes())
}

// Body buffers are kept on a short free list rather than in a sync.Pool:
// a pool is emptied by every other garbage collection, after which each
// search grew a fresh buffer to the size of its reply again. The list
// holds at most maxFreeBodies buffers of at most maxPooledBody bytes.
const (
	maxPooledBody = 1 << 20
	maxFreeBodies = 8
)

var freeBodies = make(chan *bytes.Buffer, maxFreeBodies)

func getBuffer() *bytes.Buffer {
	select {
	case b := <-freeBodies:
		return b
	default:
		return new(bytes.Buffer)
	}
}

func putBuffer(b *bytes.Buffer) {
	if b.Cap() > maxPooledBody {
		return
	}
	b.Reset()
	select {
	case freeBodies <- b:
	default:
	}
}

// KnnField returns knn.field of a search body ("" when absent, not a
// string or the body malformed).
func KnnField(body []byte) string {
	raw, ok := Lookup(body, "knn", "field")
	if !ok {
		return ""
	}
	r := &reader{b: raw}
	if s, err := r.str(); err == nil {
		return s
	}
	return ""
}

// Lookup returns the raw value at a path of object members in a JSON
// document, reading it once and skipping everything else (a plan body
// carries a query vector that need not be decoded to find a member).
func Lookup(doc []byte, path ...string) ([]byte, bool) {
	r := &reader{b: doc}
	var (
		found []byte
		ok    bool
	)
	var walk func(depth int) error
	walk = func(depth int) error {
		if depth == len(path) {
			r.ws()
			start := r.i
			if err := r.skip(); err != nil {
				return err
			}
			found, ok = r.b[start:r.i], true
			return nil
		}
		if r.ws() != '{' {
			return r.skip()
		}
		return r.object(func(key []byte) error {
			if !ok && string(key) == path[depth] {
				return walk(depth + 1)
			}
			return r.skip()
		})
	}
	if walk(0) != nil || !ok {
		return nil, false
	}
	return found, true
}
