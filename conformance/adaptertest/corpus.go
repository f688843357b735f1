package adaptertest

import (
	"encoding/json"
	"math"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
)

// Field is one typed metadata field of the Schema.
type Field struct {
	Name string
	Type filterlang.FieldType
	// Array marks a multi-valued field (an array of Type values).
	Array bool
}

// VectorSpec describes the Schema's dense vector field.
type VectorSpec struct {
	Name       string
	Dims       int
	Similarity capability.Similarity
	// Element is the type the field stores: "" (float) or
	// capability.ElementInt8 (a byte vector field).
	Element capability.Element
}

// Schema is the engine-neutral description of the conformance target. Each
// Harness turns it into a native index mapping or collection and loads Docs.
type Schema struct {
	// IDField names the document identifier.
	IDField string
	// TextField is the BM25-searchable body; TitleField is a short title
	// (also a filterable text field, and the citation title).
	TextField, TitleField string
	// Fields are the filterable metadata fields, all present in Meta().
	Fields []Field
	// Vector is the one dense vector field.
	Vector VectorSpec
	// Docs is the corpus to load.
	Docs []Doc
}

// DefaultSchema returns the conformance schema with a fresh copy of Corpus.
func DefaultSchema() Schema {
	return Schema{
		IDField:    "id",
		TextField:  "text",
		TitleField: "title",
		Fields: []Field{
			{Name: "lang", Type: filterlang.TypeKeyword},
			{Name: "tags", Type: filterlang.TypeKeyword, Array: true},
			{Name: "year", Type: filterlang.TypeInt},
			{Name: "rating", Type: filterlang.TypeFloat},
			{Name: "published", Type: filterlang.TypeBool},
			{Name: "published_at", Type: filterlang.TypeDate},
			{Name: "title", Type: filterlang.TypeText},
		},
		Vector: VectorSpec{Name: "embedding", Dims: 8, Similarity: capability.SimCosine},
		Docs:   Corpus(),
	}
}

// Int8Schema is DefaultSchema over a byte (int8) vector field: every
// corpus vector is multiplied by 10, which makes each an exact integer
// vector in [-128, 127] (the corpus has at most one decimal, |v| ≤ 5) with
// the same cosine to any query as the float one, so the cosine oracles
// of the suite hold unchanged.
func Int8Schema() Schema {
	s := DefaultSchema()
	s.Vector.Element = capability.ElementInt8
	for i := range s.Docs {
		s.Docs[i].Vector = int8Vector(s.Docs[i].Vector)
	}
	return s
}

// int8Vector is v multiplied by 10, rounded and clamped to [-128, 127].
func int8Vector(v []float32) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(max(-128, min(127, math.Round(float64(x)*10))))
	}
	return out
}

// FieldTypes returns the filterable fields as name → type.
func (s Schema) FieldTypes() map[string]filterlang.FieldType {
	m := make(map[string]filterlang.FieldType, len(s.Fields))
	for _, f := range s.Fields {
		m[f.Name] = f.Type
	}
	return m
}

// Documents returns Docs as adapters.Documents (id, text, JSON-shaped meta
// including the title, and the hand-built vector), ready for a Writer or a
// direct load.
func (s Schema) Documents() []adapters.Document {
	out := make([]adapters.Document, len(s.Docs))
	for i, d := range s.Docs {
		out[i] = adapters.Document{ID: d.ID, Text: d.Text, Meta: d.Meta(), Vector: append([]float32(nil), d.Vector...)}
	}
	return out
}

// Doc is one corpus document. Optional fields are nil when absent, so the
// oracle predicates can express exists semantics. Lang, Year and Published
// are present on every document (ne/nin have one meaning everywhere).
type Doc struct {
	ID          string
	Title       string
	Text        string
	Lang        string
	Tags        []string
	Year        int
	Rating      *float64
	Published   bool
	PublishedAt *time.Time
	Vector      []float32
	// Unique is a term that occurs in this document's text and nowhere
	// else in the corpus: the known-item lexical query for it.
	Unique string
}

// Meta returns the document metadata as JSON would decode it (numbers are
// float64, arrays []any, dates RFC 3339 strings). Absent fields are omitted.
func (d Doc) Meta() map[string]any {
	m := map[string]any{"title": d.Title, "lang": d.Lang, "year": d.Year, "published": d.Published}
	if d.Tags != nil {
		m["tags"] = d.Tags
	}
	if d.Rating != nil {
		m["rating"] = *d.Rating
	}
	if d.PublishedAt != nil {
		m["published_at"] = d.PublishedAt.UTC().Format(time.RFC3339)
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // unreachable: plain values
	}
	out := map[string]any{}
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

func f64(v float64) *float64 { return &v }

func day(s string) *time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return &t
}

func vec(v ...float32) []float32 { return v }

// Corpus returns the conformance corpus: 30 short hand-written documents.
// Several carry characters that a query DSL would interpret (quotes,
// backslashes, JSON, *, ?, AND/OR/NOT, field prefixes) and non-ASCII text
// (café, 東京, emoji), so the suite can prove query text is literal (§15.4).
// Vector dimensions loosely mean: 0 coffee, 1 tea, 2 travel, 3 code,
// 4 food, 5 music, 6 science, 7 text/misc. d01–d03 are near-duplicates
// (the MMR check relies on it). The words "query", "match" and "all" occur
// only in d20.
func Corpus() []Doc {
	return []Doc{
		{ID: "d01", Title: "Espresso basics", Text: "A ristretto is a short espresso pulled with finely ground coffee under high pressure.",
			Lang: "en", Tags: []string{"coffee", "guide"}, Year: 2019, Rating: f64(4.5), Published: true, PublishedAt: day("2019-02-10"),
			Vector: vec(5, 1, 0, 0, 1, 0, 0, 0), Unique: "ristretto"},
		{ID: "d02", Title: "Espresso extraction", Text: "Dial in the grinder, tamp evenly and lock the portafilter before pulling an espresso shot.",
			Lang: "en", Tags: []string{"coffee"}, Year: 2020, Rating: f64(4.0), Published: true, PublishedAt: day("2020-05-01"),
			Vector: vec(5, 1.2, 0, 0, 0.8, 0, 0, 0), Unique: "portafilter"},
		{ID: "d03", Title: "Espresso at home", Text: "A cheap tamper and a steady hand are enough to make decent espresso at home.",
			Lang: "en", Tags: []string{"coffee", "home"}, Year: 2021, Rating: f64(3.5), Published: false,
			Vector: vec(4.8, 1, 0, 0, 1.2, 0, 0.1, 0), Unique: "tamper"},
		{ID: "d04", Title: "Coffee chemistry", Text: "Roasting breaks down chlorogenic acids, which changes bitterness and body in the cup.",
			Lang: "en", Tags: []string{"coffee", "science"}, Year: 2018, Rating: f64(4.8), Published: true, PublishedAt: day("2018-11-20"),
			Vector: vec(3, 0, 0, 0, 0, 0, 3, 0.5), Unique: "chlorogenic"},
		{ID: "d05", Title: "Green tea steeping", Text: "Steep sencha at seventy degrees for about a minute to avoid bitterness.",
			Lang: "en", Tags: []string{"tea", "guide"}, Year: 2020, Rating: f64(4.2), Published: true, PublishedAt: day("2020-03-15"),
			Vector: vec(0.5, 5, 0, 0, 0, 0, 0, 1), Unique: "sencha"},
		{ID: "d06", Title: "Chai spices", Text: "Masala chai simmers black tea with cardamom, ginger, cloves and milk.",
			Lang: "en", Tags: []string{"tea", "food"}, Year: 2017, Published: true, PublishedAt: day("2017-08-08"),
			Vector: vec(0, 4, 0, 0, 3, 0, 0, 0.5), Unique: "cardamom"},
		{ID: "d07", Title: "Matcha whisking", Text: "A bamboo chasen whisks matcha into a smooth, frothy bowl.",
			Lang: "en", Tags: []string{"tea"}, Year: 2022, Rating: f64(3.9), Published: false,
			Vector: vec(0, 5, 1, 0, 0, 0, 1, 0), Unique: "chasen"},
		{ID: "d08", Title: "Kyoto trip", Text: "We walked up to Kiyomizu temple at dawn, then drank tea by the river.",
			Lang: "en", Tags: []string{"travel", "tea"}, Year: 2019, Rating: f64(4.7), Published: true, PublishedAt: day("2019-10-01"),
			Vector: vec(0, 2, 5, 0, 0, 0, 0, 0.3), Unique: "kiyomizu"},
		{ID: "d09", Title: "Tokyo by night", Text: "Neon streets in Shinjuku stay busy long after the last train.",
			Lang: "en", Tags: []string{"travel"}, Year: 2023, Rating: f64(4.1), Published: true, PublishedAt: day("2023-01-20"),
			Vector: vec(0, 0, 5, 0, 1, 1, 0, 0), Unique: "shinjuku"},
		{ID: "d10", Title: "Tokyo coffee shops", Text: "Old kissaten serve siphon coffee and thick toast to regulars.",
			Lang: "en", Tags: []string{"travel", "coffee"}, Year: 2022, Rating: f64(4.4), Published: true, PublishedAt: day("2022-06-30"),
			Vector: vec(3, 0, 4, 0, 0, 0, 0, 0.2), Unique: "kissaten"},
		{ID: "d11", Title: "Paris café guide", Text: "Le café près du canal ouvre tôt ; la boulangerie voisine vend des croissants.",
			Lang: "fr", Tags: []string{"travel", "coffee", "food"}, Year: 2021, Rating: f64(4.6), Published: true, PublishedAt: day("2021-04-12"),
			Vector: vec(2, 0, 4, 0, 2, 0, 0, 0), Unique: "boulangerie"},
		{ID: "d12", Title: "Berlin techno", Text: "Der Club Tresor öffnet am Freitag und schließt erst am Montag.",
			Lang: "de", Tags: []string{"music", "travel"}, Year: 2016, Rating: f64(3.2), Published: true, PublishedAt: day("2016-07-07"),
			Vector: vec(0, 0, 3, 0, 0, 5, 0, 0), Unique: "tresor"},
		{ID: "d13", Title: "Jazz standards", Text: "Learning Coltrane changes teaches fast movement between distant keys.",
			Lang: "en", Tags: []string{"music"}, Year: 2015, Rating: f64(4.9), Published: true, PublishedAt: day("2015-12-24"),
			Vector: vec(0, 0, 0, 0, 0, 5, 1, 1), Unique: "coltrane"},
		{ID: "d14", Title: "Sourdough starter", Text: "Feed the levain twice a day until it doubles within six hours.",
			Lang: "en", Tags: []string{"food", "guide"}, Year: 2020, Rating: f64(4.3), Published: false, PublishedAt: day("2020-04-04"),
			Vector: vec(0, 0, 0, 0, 5, 0, 2, 0), Unique: "levain"},
		{ID: "d15", Title: "Ramen broth", Text: "Tonkotsu broth boils pork bones for twelve hours until it turns milky.",
			Lang: "en", Tags: []string{"food", "travel"}, Year: 2018, Rating: f64(4.0), Published: true, PublishedAt: day("2018-02-02"),
			Vector: vec(0, 0, 2, 0, 5, 0, 0, 1), Unique: "tonkotsu"},
		{ID: "d16", Title: "Go concurrency", Text: "A goroutine blocked on an unbuffered channel waits until a receiver is ready.",
			Lang: "en", Tags: []string{"code"}, Year: 2021, Rating: f64(4.7), Published: true, PublishedAt: day("2021-09-09"),
			Vector: vec(0, 0, 0, 5, 0, 0, 1, 0), Unique: "goroutine"},
		{ID: "d17", Title: "Rust ownership", Text: "The borrowck rejects two mutable references to the same value at once.",
			Lang: "en", Tags: []string{"code"}, Year: 2022, Rating: f64(4.5), Published: true, PublishedAt: day("2022-02-22"),
			Vector: vec(0, 0, 0, 5, 0, 0, 2, 0.5), Unique: "borrowck"},
		{ID: "d18", Title: "SQL injection", Text: "Never build statements like '; DROP TABLE docs; -- by hand: parameterise every value.",
			Lang: "en", Tags: []string{"code", "security"}, Year: 2019, Rating: f64(4.2), Published: true, PublishedAt: day("2019-06-06"),
			Vector: vec(0, 0, 0, 4, 0, 0, 0, 3), Unique: "parameterise"},
		{ID: "d19", Title: "HTML escaping", Text: "A sanitiser must escape <script>alert(1)</script> before it reaches the page.",
			Lang: "en", Tags: []string{"code", "security"}, Year: 2020, Published: true,
			Vector: vec(0, 0, 0, 4, 0, 1, 0, 3), Unique: "sanitiser"},
		{ID: "d20", Title: "Raw JSON payloads", Text: `Someone pasted {"query":{"match_all":{}}} into the search box; it must be stored verbatim.`,
			Lang: "en", Tags: []string{"code", "security"}, Year: 2023, Rating: f64(3.8), Published: false, PublishedAt: day("2023-03-03"),
			Vector: vec(0, 0, 0, 3, 0, 0, 0, 4), Unique: "verbatim"},
		{ID: "d21", Title: "Windows paths", Text: `Paths like C:\Users\nadia\notes.txt use backslashes (\\) and escaped quotes (\") inside strings.`,
			Lang: "en", Tags: []string{"code"}, Year: 2017, Rating: f64(3.0), Published: true, PublishedAt: day("2017-01-01"),
			Vector: vec(0, 0, 0, 3, 0, 0, 1, 4), Unique: "nadia"},
		{ID: "d22", Title: "Glob patterns", Text: "Shell globbing expands *.go and file?.txt; the * and ? characters are wildcards.",
			Lang: "en", Tags: []string{"code"}, Year: 2018, Rating: f64(3.6), Published: true, PublishedAt: day("2018-08-18"),
			Vector: vec(0.2, 0, 0, 4, 0, 0, 0, 2), Unique: "globbing"},
		{ID: "d23", Title: "Lucene operators", Text: "Lucene syntax treats AND, OR and NOT as operators, plus title:foo prefixes and -negation.",
			Lang: "en", Tags: []string{"code", "search"}, Year: 2024, Rating: f64(4.0), Published: true, PublishedAt: day("2024-01-15"),
			Vector: vec(0, 0, 0, 3, 0, 0, 2, 2), Unique: "lucene"},
		{ID: "d24", Title: "Quotes and apostrophes", Text: `She said "hello" and 'goodbye' — then left without a word.`,
			Lang: "en", Tags: []string{"writing"}, Year: 2016, Published: false,
			Vector: vec(0, 0, 1, 0, 0, 2, 0, 4), Unique: "goodbye"},
		{ID: "d25", Title: "東京 notes", Text: "Notes from 東京: 喫茶店 culture and hand-drip kōhī at dawn.",
			Lang: "ja", Tags: []string{"travel", "coffee"}, Year: 2023, Rating: f64(4.2), Published: true, PublishedAt: day("2023-05-05"),
			Vector: vec(2, 0, 5, 0, 0, 0, 0, 1), Unique: "喫茶店"},
		{ID: "d26", Title: "Launch party", Text: "Launch day 🚀 went well 🎉 and the confetti took a week to clean up.",
			Lang: "en", Tags: []string{"team"}, Year: 2024, Rating: f64(4.9), Published: true, PublishedAt: day("2024-03-01"),
			Vector: vec(0, 0, 0, 1, 0, 3, 0, 3), Unique: "confetti"},
		{ID: "d27", Title: "Crème brûlée", Text: "La crème brûlée demande un sucre caramélisé au chalumeau.",
			Lang: "fr", Tags: []string{"food"}, Year: 2019, Rating: f64(4.4), Published: true, PublishedAt: day("2019-09-19"),
			Vector: vec(0, 0, 0, 0, 5, 0, 1, 2), Unique: "chalumeau"},
		{ID: "d28", Title: "Science of sleep", Text: "Caffeine late in the day shifts the circadian clock by up to an hour.",
			Lang: "en", Tags: []string{"science"}, Year: 2021, Rating: f64(4.1), Published: false, PublishedAt: day("2021-11-11"),
			Vector: vec(0, 1, 0, 0, 0, 0, 5, 0), Unique: "circadian"},
		{ID: "d29", Title: "Quantum notes", Text: "Entanglement correlations survive distance but cannot carry a message faster than light.",
			Lang: "en", Tags: []string{"science"}, Year: 2024, Published: true, PublishedAt: day("2024-02-29"),
			Vector: vec(0, 0, 0, 1, 0, 0, 5, 1.5), Unique: "entanglement"},
		{ID: "d30", Title: "Miscellany", Text: "A miscellany of scraps that fits no particular category.",
			Lang: "en", Year: 2014, Rating: f64(2.5), Published: false,
			Vector: vec(1, 1, 1, 1, 1, 1, 1, 1), Unique: "scraps"},
	}
}

// docByID returns the corpus document with id, or false.
func docByID(docs []Doc, id string) (Doc, bool) {
	for _, d := range docs {
		if d.ID == id {
			return d, true
		}
	}
	return Doc{}, false
}
