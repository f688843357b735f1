package filterdifftest

import "encoding/json"

// Feature is an engine capability that some field kinds need.
type Feature uint

// Features a Target declares; kinds needing one the engine lacks are left
// out.
const (
	// FeatureMapperExtras: scaled_float and match_only_text.
	FeatureMapperExtras Feature = 1 << iota
	// FeatureWildcard: the wildcard field type.
	FeatureWildcard
	// FeatureConstantKeyword: the constant_keyword field type.
	FeatureConstantKeyword
	// FeatureUnsignedLong: the unsigned_long field type.
	FeatureUnsignedLong
	// FeatureFlattened: Elasticsearch's flattened field type.
	FeatureFlattened
	// FeatureFlatObject: OpenSearch's flat_object field type.
	FeatureFlatObject
	// FeatureRuntime: a runtime section in the mapping (Elasticsearch).
	FeatureRuntime
	// FeatureDerived: a derived section in the mapping (OpenSearch 3.x).
	FeatureDerived
	// FeatureEpochFractionNumbers: the engine indexes an epoch_second date
	// given as a JSON number with a fraction correctly. Elasticsearch
	// 9.2.0 does not: the number's value also lands in the next numeric
	// field of the document. Without it such dates are sent as strings.
	FeatureEpochFractionNumbers
	// FeatureNegativeEpochMillis: the engine reads a date before 1970
	// given as epoch milliseconds (-1). Elasticsearch 7.17 refuses the
	// document; without it such dates are sent in ISO forms only.
	FeatureNegativeEpochMillis
)

// kind is one row of the field-kind table: a mapping whose parameters
// change what a filter selects, the values its documents hold, and how
// the oracle reads them (the Field it describes).
type kind struct {
	name  string
	needs Feature
	build func(g *gen, name string) *part
}

// part is what one kind adds to an index.
type part struct {
	// props are top-level mapping properties; runtime and derived go to
	// those mapping sections.
	props, runtime, derived map[string]any
	fields                  []*Field
	// write puts the kind's values into a document's source.
	write func(g *gen, src map[string]any)
	// names are leaf names the kind makes that are no filter field
	// (multi-fields, object roots).
	names []string
}

// scalar is a part of one field at a top-level property, whose documents
// draw shaped values from the field's pool.
func scalar(f *Field, mapping map[string]any) *part {
	f.Mapping = mapping
	if f.Sources == nil {
		f.Sources = []string{f.Name}
	}
	return &part{props: map[string]any{f.Name: mapping}, fields: []*Field{f},
		write: func(g *gen, src map[string]any) { set(src, f.Name, g.shaped(f.pool)) }}
}

// normalizer is the lowercase normalizer every index defines.
const normalizer = "lc"

// indexSettings are the settings of every generated index.
var indexSettings = map[string]any{"number_of_shards": 1, "number_of_replicas": 0,
	"analysis": map[string]any{"normalizer": map[string]any{normalizer: map[string]any{"type": "custom", "filter": []any{"lowercase"}}}}}

// keywordKind is a keyword field; extra returns its mapping parameters
// and the Field facts they imply (ignore_above, null_value, a pool).
func keywordKind(name string, extra func(g *gen) (map[string]any, *Field)) kind {
	return kind{name: name, build: func(g *gen, n string) *part {
		m, f := extra(g)
		m["type"] = "keyword"
		f.Name, f.Kind, f.Class = n, name, ClassKeyword
		if f.pool == nil {
			f.pool = g.keywordPool(f.IgnoreAbove)
		}
		return scalar(f, m)
	}}
}

// textKind is a text (or match_only_text) field; sub returns its keyword
// sub-field's name, parameters and Field facts (nil: no sub-field).
func textKind(name, typ string, needs Feature, sub func(g *gen) (string, map[string]any, *Field)) kind {
	return kind{name: name, needs: needs, build: func(g *gen, n string) *part {
		m := map[string]any{"type": typ}
		subName, subMap, f := sub(g)
		var names []string
		if subMap != nil {
			subMap["type"] = "keyword"
			m["fields"] = map[string]any{subName: subMap}
			names = append(names, n+"."+subName)
		}
		f.Name, f.Kind, f.Class = n, name, ClassText
		f.pool = g.textPool(f.IgnoreAbove)
		p := scalar(f, m)
		p.names = names
		return p
	}}
}

// intKind is an integer field of type typ; extra adjusts its mapping and
// Field (null_value, coerce).
func intKind(name, typ string, needs Feature, core bool, extra func(g *gen, m map[string]any, f *Field)) kind {
	return kind{name: name, needs: needs, build: func(g *gen, n string) *part {
		m := map[string]any{"type": typ}
		f := &Field{Name: n, Kind: name, Class: ClassInt, IntType: typ, Coerce: true, Core: core}
		if extra != nil {
			extra(g, m, f)
		}
		f.pool = g.intPool(typ, f.Coerce)
		return scalar(f, m)
	}}
}

// floatKind is a float-family field of precision prec; extra adjusts its
// mapping and Field (null_value, coerce).
func floatKind(name, prec string, scale float64, needs Feature, core bool, extra func(g *gen, m map[string]any, f *Field)) kind {
	return kind{name: name, needs: needs, build: func(g *gen, n string) *part {
		m := map[string]any{"type": prec}
		if prec == PrecScaled {
			m["scaling_factor"] = scale
		}
		f := &Field{Name: n, Kind: name, Class: ClassFloat, Prec: prec, Scale: scale, Coerce: true, Core: core}
		if extra != nil {
			extra(g, m, f)
		}
		f.pool = g.floatPool(prec, f.Coerce)
		return scalar(f, m)
	}}
}

// dateKind is a date (or date_nanos) field with a format.
func dateKind(name string, nanos bool, format string, core bool) kind {
	return kind{name: name, build: func(g *gen, n string) *part {
		typ := "date"
		if nanos {
			typ = "date_nanos"
		}
		m := map[string]any{"type": typ}
		if format != formatDefault {
			m["format"] = format
		}
		f := &Field{Name: n, Kind: name, Class: ClassDate, Nanos: nanos, EpochSeconds: format == formatEpochSecond, Core: core}
		f.pool = g.datePool(nanos, format)
		return scalar(f, m)
	}}
}

// boolKind is a boolean field, with a random null_value when nullValue.
func boolKind(name string, core bool, nullValue bool) kind {
	return kind{name: name, build: func(g *gen, n string) *part {
		m := map[string]any{"type": "boolean"}
		f := &Field{Name: n, Kind: name, Class: ClassBool, Core: core, pool: boolPool}
		if nullValue {
			nv := g.chance(50)
			m["null_value"], f.NullValue = nv, nv
		}
		return scalar(f, m)
	}}
}

// kinds is the field-kind table. Every round generates one field of each
// kind the engine supports, named after the kind.
var kinds = []kind{
	keywordKind("kw_plain", func(*gen) (map[string]any, *Field) { return map[string]any{}, &Field{Core: true} }),
	keywordKind("kw_ia", func(g *gen) (map[string]any, *Field) {
		ia := 4 + g.r.IntN(9)
		return map[string]any{"ignore_above": ia}, &Field{IgnoreAbove: ia}
	}),
	// The ignore_above of dynamically mapped strings, with longer values.
	keywordKind("kw_ia256", func(*gen) (map[string]any, *Field) {
		return map[string]any{"ignore_above": 256}, &Field{IgnoreAbove: 256}
	}),
	keywordKind("kw_norm", func(*gen) (map[string]any, *Field) {
		return map[string]any{"normalizer": normalizer}, &Field{}
	}),
	keywordKind("kw_null", func(g *gen) (map[string]any, *Field) {
		nv := []string{"NULL", "n/a"}[g.r.IntN(2)]
		f := &Field{NullValue: nv}
		f.pool = append(g.keywordPool(0), nv)
		return map[string]any{"null_value": nv}, f
	}),
	keywordKind("kw_nodv", func(*gen) (map[string]any, *Field) { return map[string]any{"doc_values": false}, &Field{} }),
	keywordKind("kw_noidx", func(*gen) (map[string]any, *Field) { return map[string]any{"index": false}, &Field{} }),
	{name: "wc", needs: FeatureWildcard, build: func(g *gen, n string) *part {
		return scalar(&Field{Name: n, Kind: "wc", Class: ClassKeyword, pool: g.keywordPool(0)}, map[string]any{"type": "wildcard"})
	}},
	{name: "ck", needs: FeatureConstantKeyword, build: func(_ *gen, n string) *part {
		f := &Field{Name: n, Kind: "ck", Class: ClassKeyword, pool: strs("const")}
		p := scalar(f, map[string]any{"type": "constant_keyword", "value": "const"})
		p.write = func(g *gen, src map[string]any) {
			// OpenSearch rejects null here: the value, or nothing.
			if g.chance(60) {
				src[n] = "const"
			}
		}
		return p
	}},
	textKind("txt", "text", 0, func(*gen) (string, map[string]any, *Field) { return "", nil, &Field{} }),
	textKind("txt_kw", "text", 0, func(*gen) (string, map[string]any, *Field) {
		return "raw", map[string]any{}, &Field{Core: true}
	}),
	// The mapping dynamic mapping gives a string.
	textKind("txt_kw256", "text", 0, func(*gen) (string, map[string]any, *Field) {
		return "keyword", map[string]any{"ignore_above": 256}, &Field{IgnoreAbove: 256}
	}),
	textKind("txt_kwia", "text", 0, func(g *gen) (string, map[string]any, *Field) {
		ia := 4 + g.r.IntN(9)
		return "raw", map[string]any{"ignore_above": ia}, &Field{IgnoreAbove: ia}
	}),
	textKind("txt_kwnorm", "text", 0, func(*gen) (string, map[string]any, *Field) {
		return "raw", map[string]any{"normalizer": normalizer}, &Field{}
	}),
	textKind("mot_kw", "match_only_text", FeatureMapperExtras, func(*gen) (string, map[string]any, *Field) {
		return "raw", map[string]any{}, &Field{}
	}),
	intKind("long_plain", "long", 0, true, nil),
	intKind("int_plain", "integer", 0, false, nil),
	intKind("short_plain", "short", 0, false, nil),
	intKind("byte_plain", "byte", 0, false, nil),
	intKind("ulong", "unsigned_long", FeatureUnsignedLong, false, nil),
	intKind("long_null", "long", 0, false, func(g *gen, m map[string]any, f *Field) {
		nv := json.Number([]string{"-1", "0"}[g.r.IntN(2)])
		m["null_value"], f.NullValue = nv, nv
	}),
	intKind("long_nocoerce", "long", 0, false, func(_ *gen, m map[string]any, f *Field) {
		m["coerce"], f.Coerce = false, false
	}),
	floatKind("dbl_plain", PrecDouble, 0, 0, true, nil),
	floatKind("flt_plain", PrecFloat, 0, 0, false, nil),
	floatKind("hf_plain", PrecHalf, 0, 0, false, nil),
	floatKind("sf10", PrecScaled, 10, FeatureMapperExtras, false, nil),
	floatKind("sf100", PrecScaled, 100, FeatureMapperExtras, false, nil),
	floatKind("dbl_null", PrecDouble, 0, 0, false, func(_ *gen, m map[string]any, f *Field) {
		m["null_value"], f.NullValue = json.Number("0.5"), json.Number("0.5")
	}),
	// 0.1 is not a float: the null_value is float32(0.1).
	floatKind("flt_null", PrecFloat, 0, 0, false, func(_ *gen, m map[string]any, f *Field) {
		m["null_value"], f.NullValue = json.Number("0.1"), json.Number("0.1")
	}),
	floatKind("flt_nocoerce", PrecFloat, 0, 0, false, func(_ *gen, m map[string]any, f *Field) {
		m["coerce"], f.Coerce = false, false
	}),
	dateKind("date_plain", false, formatDefault, true),
	dateKind("date_es", false, formatEpochSecond, false),
	dateKind("date_opt", false, formatOptionalTime, false),
	dateKind("dnanos", true, formatDefault, true),
	boolKind("bool_plain", true, false),
	boolKind("bool_null", false, true),
	{name: "obj", build: objectKind},
	{name: "nst", build: nestedKind},
	{name: "flat", needs: FeatureFlattened, build: flatKind("flattened")},
	{name: "flat", needs: FeatureFlatObject, build: flatKind("flat_object")},
	{name: "alias_kw", build: func(_ *gen, n string) *part {
		// An alias of kw_plain, which every index has; documents cannot
		// hold values for an alias.
		m := map[string]any{"type": "alias", "path": "kw_plain"}
		f := &Field{Name: n, Kind: "alias_kw", Class: ClassKeyword, Mapping: m, Sources: []string{"kw_plain"}}
		return &part{props: map[string]any{n: m}, fields: []*Field{f}, write: func(*gen, map[string]any) {}}
	}},
	{name: "cp", build: copyToKind},
	{name: "rt_kw", needs: FeatureRuntime, build: func(g *gen, n string) *part {
		// A runtime field without a script reads the source field of its
		// name; the index maps no such property (dynamic: false).
		m := map[string]any{"type": "keyword"}
		f := &Field{Name: n, Kind: "rt_kw", Class: ClassKeyword, Mapping: map[string]any{"runtime": m}, Sources: []string{n}, pool: g.keywordPool(0)}
		return &part{runtime: map[string]any{n: m}, fields: []*Field{f},
			write: func(g *gen, src map[string]any) { set(src, n, g.shaped(f.pool)) }}
	}},
	{name: "dv_kw", needs: FeatureDerived, build: func(g *gen, n string) *part {
		// A derived field emitting every string of the unmapped source
		// field dv_src.
		src := "dv_src"
		m := map[string]any{"type": "keyword", "script": map[string]any{"source": `def v = params._source['` + src + `'];` +
			` if (v instanceof List) { for (def x : v) { if (x != null) { emit(x.toString()) } } } else if (v != null) { emit(v.toString()) }`}}
		f := &Field{Name: n, Kind: "dv_kw", Class: ClassKeyword, Mapping: map[string]any{"derived": m}, Sources: []string{src}, pool: g.keywordPool(0)}
		return &part{derived: map[string]any{n: m}, fields: []*Field{f}, names: []string{src},
			write: func(g *gen, s map[string]any) { set(s, src, g.shaped(f.pool)) }}
	}},
}

// objectKind is an object "obj" with obj.kw, obj.num and obj.in.kw, whose
// documents use nested objects, dotted keys, both mixed, and arrays of
// objects.
func objectKind(g *gen, n string) *part {
	kw := &Field{Name: n + ".kw", Kind: "obj", Class: ClassKeyword, Sources: []string{n + ".kw"}, pool: g.keywordPool(0), Mapping: map[string]any{"type": "keyword"}}
	num := &Field{Name: n + ".num", Kind: "obj", Class: ClassInt, IntType: "long", Coerce: true, Sources: []string{n + ".num"}, pool: g.intPool("long", true), Mapping: map[string]any{"type": "long"}}
	in := &Field{Name: n + ".in.kw", Kind: "obj", Class: ClassKeyword, Sources: []string{n + ".in.kw"}, pool: g.keywordPool(0), Mapping: map[string]any{"type": "keyword"}}
	props := map[string]any{n: map[string]any{"properties": map[string]any{
		"kw": kw.Mapping, "num": num.Mapping, "in": map[string]any{"properties": map[string]any{"kw": in.Mapping}}}}}
	write := func(g *gen, src map[string]any) {
		k, u, i := g.shaped(kw.pool), g.shaped(num.pool), g.shaped(in.pool)
		switch g.r.IntN(7) {
		case 0: // nested objects
			o := map[string]any{}
			set(o, "kw", k)
			set(o, "num", u)
			if i != absent {
				o["in"] = map[string]any{"kw": i}
			}
			src[n] = o
		case 1: // dotted keys at the top
			set(src, n+".kw", k)
			set(src, n+".num", u)
			set(src, n+".in.kw", i)
		case 2: // a dotted key inside the object
			o := map[string]any{}
			set(o, "kw", k)
			set(o, "in.kw", i)
			src[n] = o
			set(src, n+".num", u)
		case 3: // an array of objects
			var objs []any
			for _, kv := range []struct {
				key string
				v   any
			}{{"kw", k}, {"num", u}, {"in.kw", i}} {
				if kv.v == absent {
					continue
				}
				if arr, ok := kv.v.([]any); ok && len(arr) > 1 {
					for _, x := range arr {
						objs = append(objs, map[string]any{kv.key: x})
					}
					continue
				}
				objs = append(objs, map[string]any{kv.key: kv.v})
			}
			src[n] = objs
		case 4: // an object and dotted keys for the same field
			o := map[string]any{}
			set(o, "kw", k)
			set(o, "num", u)
			src[n] = o
			set(src, n+".kw", g.shaped(kw.pool))
			if i != absent {
				src[n+".in"] = map[string]any{"kw": i}
			}
		case 5:
			src[n] = []any{nil, map[string]any{}, nil}[g.r.IntN(3)]
		}
	}
	return &part{props: props, fields: []*Field{kw, num, in}, write: write, names: []string{n, n + ".in"}}
}

// nestedKind is a nested field "nst" with nst.kw and nst.num.
func nestedKind(g *gen, n string) *part {
	kw := &Field{Name: n + ".kw", Kind: "nst", Class: ClassKeyword, Sources: []string{n + ".kw"}, pool: g.keywordPool(0), Mapping: map[string]any{"type": "keyword"}}
	num := &Field{Name: n + ".num", Kind: "nst", Class: ClassInt, IntType: "long", Coerce: true, Sources: []string{n + ".num"}, pool: g.intPool("long", true), Mapping: map[string]any{"type": "long"}}
	m := map[string]any{"type": "nested", "properties": map[string]any{"kw": kw.Mapping, "num": num.Mapping}}
	kw.Mapping, num.Mapping = m, m
	write := func(g *gen, src map[string]any) {
		if g.chance(20) {
			return
		}
		var objs []any
		for range 1 + g.r.IntN(3) {
			o := map[string]any{}
			set(o, "kw", g.shaped(kw.pool))
			set(o, "num", g.shaped(num.pool))
			objs = append(objs, o)
		}
		if len(objs) == 1 && g.chance(50) {
			src[n] = objs[0]
			return
		}
		src[n] = objs
	}
	return &part{props: map[string]any{n: m}, fields: []*Field{kw, num}, write: write, names: []string{n}}
}

// flatKind is a flattened (Elasticsearch) or flat_object (OpenSearch)
// field "flat": its root holds every string under it, flat.a the strings
// at key a.
func flatKind(typ string) func(g *gen, n string) *part {
	return func(g *gen, n string) *part {
		m := map[string]any{"type": typ}
		root := &Field{Name: n, Kind: "flat", Class: ClassKeyword, Mapping: m, Sources: []string{n}, Leaves: true, pool: g.keywordPool(0)}
		a := &Field{Name: n + ".a", Kind: "flat", Class: ClassKeyword, Mapping: m, Sources: []string{n + ".a"}, Leaves: true}
		write := func(g *gen, src map[string]any) {
			if g.chance(20) {
				return
			}
			o := map[string]any{}
			pick := func() any {
				if g.chance(20) {
					return []any{g.pick(root.pool), g.pick(root.pool)}
				}
				return g.pick(root.pool)
			}
			if g.chance(70) {
				o["a"] = pick()
			}
			if g.chance(60) {
				o["b"] = map[string]any{"c": pick()}
			}
			src[n] = o
		}
		return &part{props: map[string]any{n: m}, fields: []*Field{root, a}, write: write}
	}
}

// copyToKind is a keyword cp_src copied to the keyword cp_dst, which also
// holds values of its own.
func copyToKind(g *gen, n string) *part {
	srcName, dstName := n+"_src", n+"_dst"
	pool := g.keywordPool(0)
	srcMap := map[string]any{"type": "keyword", "copy_to": dstName}
	dstMap := map[string]any{"type": "keyword"}
	src := &Field{Name: srcName, Kind: "cp", Class: ClassKeyword, Mapping: srcMap, Sources: []string{srcName}, pool: pool}
	dst := &Field{Name: dstName, Kind: "cp", Class: ClassKeyword, Mapping: map[string]any{dstName: dstMap, "copied from": srcName},
		Sources: []string{dstName, srcName}, pool: pool}
	write := func(g *gen, s map[string]any) {
		set(s, srcName, g.shaped(pool))
		if g.chance(40) {
			set(s, dstName, g.shaped(pool))
		}
	}
	return &part{props: map[string]any{srcName: srcMap, dstName: dstMap}, fields: []*Field{src, dst}, write: write}
}

// bodyField is the BM25 field every index has; every document's body holds
// the query token "doc", so a sparse retrieve reaches every document.
const bodyField = "body"

// bodyPart writes the body.
func bodyPart() *part {
	f := &Field{Name: bodyField, Kind: "body", Class: ClassText, Sources: []string{bodyField}}
	p := scalar(f, map[string]any{"type": "text"})
	p.write = func(g *gen, src map[string]any) { src[bodyField] = g.body() }
	return p
}

// kindsFor returns the kinds an engine with feats supports.
func kindsFor(feats Feature) []kind {
	var out []kind
	for _, k := range kinds {
		if k.needs == 0 || feats&k.needs != 0 {
			out = append(out, k)
		}
	}
	return out
}
