package filterlang

import (
	"errors"
	"slices"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
)

func TestWalkOrderAndStop(t *testing.T) {
	f := mustFilter(t, `{"and":[{"field":"kw","op":"eq","value":"a"},
		{"or":[{"field":"n","op":"gt","value":1},{"not":{"field":"b","op":"eq","value":true}}]},
		{"field":"txt","op":"contains","value":"x"}]}`)
	var got []string
	for _, c := range Conds(f) {
		got = append(got, c.Field)
	}
	if want := []string{"kw", "n", "b", "txt"}; !slices.Equal(got, want) {
		t.Fatalf("Conds = %v, want %v", got, want)
	}
	stop := errors.New("stop")
	var seen int
	err := Walk(f, func(c *Cond) error {
		seen++
		if c.Field == "n" {
			return stop
		}
		return nil
	})
	if err != stop || seen != 2 {
		t.Fatalf("Walk = %v after %d conds, want stop after 2", err, seen)
	}
	if Walk(nil, func(*Cond) error { return stop }) != nil || Conds(nil) != nil {
		t.Fatal("nil filter has conditions")
	}
}

func TestCheckFieldOps(t *testing.T) {
	f := mustFilter(t, `{"or":[{"field":"kw","op":"eq","value":"a"},{"field":"n","op":"gt","value":1}]}`)
	serves := map[string][]Op{"kw": {OpEq}, "n": {OpEq}}
	err := CheckFieldOps(f, func(field string) []Op { return serves[field] })
	rcptest.WantError(t, err, rcp.CodeInvalidParams, "filter.n", "")
	serves["n"] = append(serves["n"], OpGt)
	if err := CheckFieldOps(f, func(field string) []Op { return serves[field] }); err != nil {
		t.Fatalf("CheckFieldOps = %v, want nil", err)
	}
}
