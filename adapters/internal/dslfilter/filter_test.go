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
	keyword := func(c *mapping.Cond) (string, error) { return c.Field + ".kw", nil }
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
	if _, err := Filter(f, func(*mapping.Cond) (string, error) { return "", boom }); !errors.Is(err, boom) {
		t.Errorf("FieldFunc error: got %v", err)
	}
}
