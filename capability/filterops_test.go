package capability

import (
	"slices"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
)

func TestFilterFieldAllowedOps(t *testing.T) {
	tests := []struct {
		name string
		ff   FilterField
		want []filterlang.Op
	}{
		{name: "nil ops: the §8 table", ff: FilterField{Type: filterlang.TypeInt},
			want: []filterlang.Op{"eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "exists"}},
		{name: "text nil ops has contains", ff: FilterField{Type: filterlang.TypeText},
			want: []filterlang.Op{"eq", "ne", "in", "nin", "contains", "exists"}},
		{name: "explicit ops narrow, in AllOps order", ff: FilterField{Type: filterlang.TypeText,
			Ops: []filterlang.Op{"exists", "eq", "in"}}, want: []filterlang.Op{"eq", "in", "exists"}},
		{name: "ops the type forbids are dropped", ff: FilterField{Type: filterlang.TypeKeyword,
			Ops: []filterlang.Op{"gt", "eq", "eq"}}, want: []filterlang.Op{"eq"}},
		{name: "empty non-nil ops: none", ff: FilterField{Type: filterlang.TypeKeyword, Ops: []filterlang.Op{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.ff.AllowedOps(); !slices.Equal(got, tc.want) {
				t.Errorf("AllowedOps = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestOpsForAndFieldOps(t *testing.T) {
	ev := fullEvidence()
	if got := ev.OpsFor("year"); !slices.Equal(got, []filterlang.Op{"eq", "gte"}) {
		t.Errorf("OpsFor(year) = %v", got)
	}
	if got := ev.OpsFor("nosuch"); got != nil {
		t.Errorf("OpsFor(nosuch) = %v, want nil", got)
	}
	tests := []struct {
		name string
		p    Policy
		want []filterlang.Op
	}{
		{name: "no policy", want: []filterlang.Op{"eq", "gte"}},
		{name: "ops narrowed", p: Policy{Operators: []filterlang.Op{"gte", "lt"}}, want: []filterlang.Op{"gte"}},
		{name: "field excluded", p: Policy{Fields: []string{"lang"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := FieldOps(ev.FilterFields[1], tc.p); !slices.Equal(got, tc.want) {
				t.Errorf("FieldOps(year) = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestDeriveOperatorsAreFieldUnion: filter.operators is the union of what
// the fields serve, so an operator no field supports (contains on a
// token-indexed text field) is not advertised.
func TestDeriveOperatorsAreFieldUnion(t *testing.T) {
	ev := fullEvidence()
	ev.FilterFields = []FilterField{
		{Name: "title", Type: filterlang.TypeText, Ops: []filterlang.Op{"eq", "ne", "in", "nin", "exists"}},
		{Name: "tag", Type: filterlang.TypeKeyword, Ops: []filterlang.Op{"eq", "gt"}},
	}
	caps, _ := Derive(ev, Policy{})
	want := []string{"eq", "ne", "in", "nin", "exists"}
	if caps.Filter == nil || !slices.Equal(caps.Filter.Operators, want) {
		t.Fatalf("filter %+v, want operators %v", caps.Filter, want)
	}
	ev.FilterFields = append(ev.FilterFields, FilterField{Name: "body", Type: filterlang.TypeText})
	caps, _ = Derive(ev, Policy{})
	if !slices.Contains(caps.Filter.Operators, "contains") {
		t.Errorf("contains not advertised with a substring-capable text field: %v", caps.Filter.Operators)
	}
}
