package dslfilter

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/mapping"
)

func TestFilter(t *testing.T) {
	ts := time.Date(2024, 1, 1, 0, 0, 0, 100, time.FixedZone("x", 3600))
	keyword := func(c *mapping.Cond) (Field, error) { return Field{Name: c.Field + ".kw"}, nil }
	for _, tc := range []struct {
		name string
		f    mapping.Filter
		want string
	}{
		{"nil", nil, `null`},
		{"date eq keeps nanoseconds, in UTC", &mapping.Cond{Field: "ts", Op: mapping.OpEq, Type: mapping.TypeDate, Value: ts},
			`{"range":{"ts.kw":{"format":"strict_date_optional_time_nanos","gte":"2023-12-31T23:00:00.0000001Z","lte":"2023-12-31T23:00:00.0000001Z"}}}`},
		{"exists false reads the field itself", &mapping.Cond{Field: "t", Op: mapping.OpExists, Type: mapping.TypeText, Value: false},
			`{"bool":{"must_not":[{"exists":{"field":"t"}}]}}`},
		{"text contains is an escaped wildcard", &mapping.Cond{Field: "t", Op: mapping.OpContains, Type: mapping.TypeText, Value: "a*b"},
			`{"wildcard":{"t.kw":{"value":"*a\\*b*"}}}`},
		{"keyword contains is membership", &mapping.Cond{Field: "k", Op: mapping.OpContains, Type: mapping.TypeKeyword, Value: "x"},
			`{"term":{"k.kw":{"value":"x"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := Filter(tc.f, keyword)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(q)
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	boom := errors.New("no exact field")
	f := &mapping.And{Children: []mapping.Filter{&mapping.Cond{Field: "t", Op: mapping.OpEq, Type: mapping.TypeText, Value: "v"}}}
	if _, err := Filter(f, func(*mapping.Cond) (Field, error) { return Field{}, boom }); !errors.Is(err, boom) {
		t.Errorf("FieldFunc error: got %v", err)
	}
}

// TestFilterMillis: on a millisecond date field a bound with a finer part
// is rewritten to its millisecond floor m so the engine's truncation
// cannot widen or narrow it; whole milliseconds pass unchanged.
func TestFilterMillis(t *testing.T) {
	half := time.Date(2024, 1, 1, 0, 0, 0, 1_500_000, time.UTC)
	whole := time.Date(2024, 1, 1, 0, 0, 0, 2_000_000, time.UTC)
	const m, m1, w = `"2024-01-01T00:00:00.001Z"`, `"2024-01-01T00:00:00.002Z"`, `"2024-01-01T00:00:00.002Z"`
	const f = `"format":"strict_date_optional_time_nanos"`
	millis := func(c *mapping.Cond) (Field, error) { return Field{Name: c.Field, Millis: true}, nil }
	for _, tc := range []struct {
		op   mapping.Op
		v    any
		want string
	}{
		{mapping.OpGt, half, `{"range":{"d":{` + f + `,"gt":` + m + `}}}`},
		{mapping.OpGte, half, `{"range":{"d":{` + f + `,"gt":` + m + `}}}`},
		{mapping.OpLt, half, `{"range":{"d":{` + f + `,"lte":` + m + `}}}`},
		{mapping.OpLte, half, `{"range":{"d":{` + f + `,"lte":` + m + `}}}`},
		{mapping.OpGte, whole, `{"range":{"d":{` + f + `,"gte":` + w + `}}}`},
		{mapping.OpEq, half, `{"range":{"d":{` + f + `,"gt":` + m + `,"lt":` + m1 + `}}}`},
		{mapping.OpEq, whole, `{"range":{"d":{` + f + `,"gte":` + w + `,"lte":` + w + `}}}`},
		{mapping.OpNin, []any{half}, `{"bool":{"must_not":[{"bool":{"should":[{"range":{"d":{` + f + `,"gt":` + m + `,"lt":` + m1 + `}}}],"minimum_should_match":1}}]}}`},
	} {
		q, err := Filter(&mapping.Cond{Field: "d", Op: tc.op, Type: mapping.TypeDate, Value: tc.v}, millis)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(q)
		if string(got) != tc.want {
			t.Errorf("%s %v:\ngot  %s\nwant %s", tc.op, tc.v, got, tc.want)
		}
	}
}
