package filterdifftest

import (
	"encoding/json"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// gen draws everything random in a round from one seeded source, so a
// seed reproduces the indices, documents and filters exactly.
type gen struct {
	r *rand.Rand
	// feats are the engine's features (newRound sets them).
	feats Feature
}

func (g *gen) pick(list []any) any     { return list[g.r.IntN(len(list))] }
func (g *gen) chance(percent int) bool { return g.r.IntN(100) < percent }

// sample returns n values drawn from list without replacement (all of
// list when it is shorter).
func (g *gen) sample(list []any, n int) []any {
	out := append([]any(nil), list...)
	g.r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out[:min(n, len(out))]
}

// absent marks a value a document leaves out.
var absent = &struct{ absent bool }{true}

// shaped returns what a document holds for a field whose values come from
// pool: absent, null, [], an array with a null, several values, or one.
func (g *gen) shaped(pool []any) any {
	switch p := g.r.IntN(100); {
	case p < 14:
		return absent
	case p < 19:
		return nil
	case p < 22:
		return []any{}
	case p < 25:
		return []any{nil}
	case p < 29:
		if g.chance(50) {
			return []any{nil, g.pick(pool)}
		}
		return []any{g.pick(pool), nil}
	case p < 42:
		arr := make([]any, 2+g.r.IntN(2))
		for i := range arr {
			arr[i] = g.pick(pool)
		}
		return arr
	}
	return g.pick(pool)
}

// set stores v at key k unless it is absent.
func set(m map[string]any, k string, v any) {
	if v != absent {
		m[k] = v
	}
}

// strs turns strings into pool values.
func strs(ss ...string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// nums turns number texts into pool values.
func nums(ss ...string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = json.Number(s)
	}
	return out
}

// keywordWords are exact-match strings: case variants, trailing and
// leading spaces, accents precomposed and combining, ß, CJK, emoji,
// wildcard metacharacters, the empty string and numeric text.
var keywordWords = strs("alpha", "Alpha", "ALPHA", "alpha ", " alpha", "beta", "Beta", "gamma", "delta",
	"é", "É", "e\u0301", "ß", "SS", "straße", "Straße", "STRASSE", "naïve", "日本語", "😀", "a😀", "x y",
	"a*b", "wh?t", `back\slash`, "", "12", "007", "-", "Doc")

// textWords make phrases for text fields.
var textWords = []string{"alpha", "Alpha", "ALPHA", "beta", "gamma", "straße", "STRASSE", "é", "naïve", "日本語",
	"😀", "a*b", "wh?t", `back\slash`, "x", "Delta"}

// aroundLength returns strings of n-1, n and n+1 UTF-16 units made of
// ASCII, of two-byte characters and of astral (two-unit) characters, and
// one of n runes but n+1 units.
func aroundLength(n int) []any {
	var out []any
	for _, m := range []int{n - 1, n, n + 1} {
		if m <= 0 {
			continue
		}
		out = append(out, strings.Repeat("a", m), "Z"+strings.Repeat("é", m-1), strings.Repeat("😀", m/2)+strings.Repeat("x", m%2))
	}
	return append(out, strings.Repeat("b", n-1)+"😀")
}

// longText is a string of n ASCII characters with spaces.
func longText(n int, seed int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(textWords[(i+seed)%4])
		b.WriteByte(' ')
	}
	return b.String()[:n]
}

// keywordPool is a keyword field's values; ignoreAbove adds strings around
// that length.
func (g *gen) keywordPool(ignoreAbove int) []any {
	pool := g.sample(keywordWords, 10+g.r.IntN(6))
	if ignoreAbove > 0 {
		pool = append(pool, g.sample(aroundLength(ignoreAbove), 5)...)
	}
	if ignoreAbove >= 200 {
		pool = append(pool, strings.Repeat("q", 300))
	}
	return pool
}

// textPool is a text field's values: phrases of one to three words, and
// strings around ignoreAbove when set.
func (g *gen) textPool(ignoreAbove int) []any {
	var pool []any
	for range 10 + g.r.IntN(6) {
		n := 1 + g.r.IntN(3)
		ws := make([]string, n)
		for i := range ws {
			ws[i] = textWords[g.r.IntN(len(textWords))]
		}
		pool = append(pool, strings.Join(ws, " "))
	}
	if g.chance(50) {
		pool = append(pool, "")
	}
	if ignoreAbove > 0 && ignoreAbove < 200 {
		pool = append(pool, g.sample(aroundLength(ignoreAbove), 4)...)
	}
	if ignoreAbove >= 200 {
		pool = append(pool, longText(ignoreAbove-1, 0), longText(ignoreAbove, 1), longText(ignoreAbove+1, 2), longText(300, 3))
	}
	return pool
}

func bigText(x *big.Int, add int64) string {
	return new(big.Int).Add(x, big.NewInt(add)).String()
}

// intPool is an integer field's values: small numbers, the type's bounds
// and, for long and unsigned_long, values beyond 2^53; with coerce some
// are numeric strings.
func (g *gen) intPool(typ string, coerce bool) []any {
	texts := []string{"0", "1", "-1", "2", "7", "12", "42", "-42", "100"}
	rg := intRanges[typ]
	texts = append(texts, rg.lo.String(), rg.hi.String(), bigText(rg.hi, -1))
	if rg.lo.Sign() < 0 {
		texts = append(texts, bigText(rg.lo, 1))
	}
	switch typ {
	case "long":
		texts = append(texts, bigText(bigPow2(53), 0), bigText(bigPow2(53), 1), "-"+bigText(bigPow2(53), 1),
			strconv.FormatInt(g.r.Int64N(1<<60), 10))
	case "unsigned_long":
		texts = append(texts, bigText(bigPow2(63), 0), bigText(bigPow2(63), 1), bigText(bigPow2(53), 0),
			new(big.Int).Add(bigPow2(63), new(big.Int).SetUint64(g.r.Uint64()>>1)).String())
	}
	if typ == "unsigned_long" {
		texts = slicesFilter(texts, func(s string) bool { return !strings.HasPrefix(s, "-") })
	}
	pool := g.sample(nums(texts...), 8+g.r.IntN(6))
	if coerce {
		for i, v := range pool {
			if g.chance(30) {
				pool[i] = string(v.(json.Number))
			}
		}
	}
	return pool
}

func slicesFilter(ss []string, keep func(string) bool) []string {
	var out []string
	for _, s := range ss {
		if keep(s) {
			out = append(out, s)
		}
	}
	return out
}

// floatTexts are decimal values at the precision edges of each type:
// both signed zeros, written with and without a fraction (an engine reads
// "-0" as the integer 0, "-0.0" as the double -0.0), values that round to
// a zero of either sign, and pairs that round alike (9.84 and 9.845 on a
// half_float).
var floatTexts = map[string][]string{
	"":         {"0", "-0", "0.0", "-0.0", "0.1", "0.2", "0.3", "0.5", "1", "-1", "7.5", "7.51", "7.515", "7.52", "-1.01", "2.5", "100.25", "1e3", "1.5e-3", "9.84"},
	PrecDouble: {"9007199254740993", "9007199254740992", "1.0000000000000002", "0.30000000000000004", "-1e-300", "9.8400000000000001"},
	PrecFloat:  {"0.10000000149011612", "16777217", "16777216", "7.510000228881836", "3.4e38", "1e-46", "-1e-46", "9.8400001"},
	PrecHalf:   {"7.51171875", "7.512", "7.5078125", "2049", "2048", "2050", "65504", "65519", "1e-7", "0.000061035156", "1e-8", "-1e-8", "9.845"},
	PrecScaled: {"7.55", "7.54", "7.45", "7.449", "7.505", "0.05", "0.005", "-0.05", "-7.55", "7.5151", "-0.004", "0.004", "9.844"},
}

// floatPool is a float field's values; with coerce some are strings.
func (g *gen) floatPool(prec string, coerce bool) []any {
	texts := append(append([]string(nil), floatTexts[""]...), floatTexts[prec]...)
	pool := g.sample(nums(texts...), 10+g.r.IntN(6))
	// Both zeros in every round: -0.0 as a double, 0 as an integer.
	pool = append(pool, json.Number("-0.0"), json.Number("0"))
	if coerce {
		for i, v := range pool {
			if g.chance(30) {
				pool[i] = string(v.(json.Number))
			}
		}
	}
	return pool
}

// Date formats of the date kinds.
const (
	formatDefault      = ""
	formatEpochSecond  = "epoch_second"
	formatOptionalTime = "strict_date_optional_time||epoch_millis"
)

var (
	zoneIndia   = time.FixedZone("", 5*3600+1800)
	zonePacific = time.FixedZone("", -8*3600)
)

// dateInstants are the instants dates are drawn from: one base instant
// and its neighbours one nanosecond, microsecond, millisecond and second
// away, the day's midnight, and a few far ones.
func dateInstants(nanos, epochSeconds bool) []time.Time {
	b := time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC)
	out := []time.Time{b, b.Add(time.Nanosecond), b.Add(time.Microsecond), b.Add(999 * time.Microsecond),
		b.Add(time.Millisecond), b.Add(1500 * time.Microsecond), b.Add(time.Second), b.Add(time.Second + 123456789),
		b.Add(-time.Nanosecond), b.Add(time.Hour), b.Truncate(24 * time.Hour), b.Truncate(24 * time.Hour).Add(24 * time.Hour),
		time.Unix(0, 0).UTC(), time.Date(2000, 2, 29, 12, 34, 56, 789000000, time.UTC), time.Date(2100, 1, 1, 0, 0, 0, 1, time.UTC)}
	if !nanos && !epochSeconds {
		out = append(out, time.UnixMilli(-1).UTC(), time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC))
	}
	return out
}

// renderSourceDate writes t in a form the field's format accepts: ISO
// with a trimmed or a nine-digit fraction, Z, an offset or no zone, a
// calendar date at midnight, epoch milliseconds as a number or digits,
// or epoch seconds for an epoch_second field.
func (g *gen) renderSourceDate(t time.Time, format string) any {
	if format == formatEpochSecond {
		s := strconv.FormatInt(t.Unix(), 10)
		ns := t.Nanosecond()
		if ns != 0 {
			s += "." + strings.TrimRight(fmt9(ns), "0")
		}
		if g.chance(30) || ns != 0 && g.feats&FeatureEpochFractionNumbers == 0 {
			return s
		}
		return json.Number(s)
	}
	var forms []any
	forms = append(forms, t.Format(time.RFC3339Nano), t.Format("2006-01-02T15:04:05.000000000Z07:00"),
		t.In(zoneIndia).Format(time.RFC3339Nano), t.In(zonePacific).Format(time.RFC3339Nano),
		t.Format(layoutNoZone))
	if t.Equal(t.Truncate(24 * time.Hour)) {
		forms = append(forms, t.Format(layoutDay))
	}
	if t.Equal(t.Truncate(time.Millisecond)) && (t.UnixMilli() >= 0 || g.feats&FeatureNegativeEpochMillis != 0) {
		ms := strconv.FormatInt(t.UnixMilli(), 10)
		forms = append(forms, json.Number(ms), json.Number(ms), ms)
	}
	return g.pick(forms)
}

func fmt9(ns int) string { return strconv.FormatInt(int64(ns)+1e9, 10)[1:] }

// datePool is a date field's values: instants, some twice in different
// forms.
func (g *gen) datePool(nanos bool, format string) []any {
	var pool []any
	for _, t := range g.sampleTimes(dateInstants(nanos, format == formatEpochSecond), 10+g.r.IntN(4)) {
		pool = append(pool, g.renderSourceDate(t, format))
		if g.chance(30) {
			pool = append(pool, g.renderSourceDate(t, format))
		}
	}
	return pool
}

func (g *gen) sampleTimes(ts []time.Time, n int) []time.Time {
	g.r.Shuffle(len(ts), func(i, j int) { ts[i], ts[j] = ts[j], ts[i] })
	return ts[:min(n, len(ts))]
}

// boolPool holds both booleans as JSON and as strings.
var boolPool = []any{true, false, true, false, "true", "false"}

// bodyWords fill the BM25 field; every body holds "doc".
var bodyWords = []string{"red", "green", "blue", "search", "engine", "filter", "index", "query"}

func (g *gen) body() string {
	ws := []string{"doc"}
	for range 1 + g.r.IntN(4) {
		ws = append(ws, bodyWords[g.r.IntN(len(bodyWords))])
	}
	g.r.Shuffle(len(ws), func(i, j int) { ws[i], ws[j] = ws[j], ws[i] })
	return strings.Join(ws, " ")
}

// nextFloat returns the float64 neighbours of x.
func nextFloat(x float64) (down, up float64) {
	return math.Nextafter(x, math.Inf(-1)), math.Nextafter(x, math.Inf(1))
}
