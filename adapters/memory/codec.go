package memory

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
)

// errBadPlan is returned for a plan this store did not produce.
var errBadPlan = errors.New("memory: invalid plan")

// wireFilter is the plan-body form of a validated filter: a small tagged
// tree that decodes back into the exact filterlang.Filter (values typed by
// the condition's field type).
type wireFilter struct {
	And   []wireFilter         `json:"and,omitempty"`
	Or    []wireFilter         `json:"or,omitempty"`
	Not   *wireFilter          `json:"not,omitempty"`
	Field string               `json:"field,omitempty"`
	Type  filterlang.FieldType `json:"type,omitempty"`
	Op    filterlang.Op        `json:"op,omitempty"`
	Value any                  `json:"value,omitempty"`
}

func encodeFilter(f filterlang.Filter) *wireFilter {
	switch n := f.(type) {
	case *filterlang.And:
		return &wireFilter{And: encodeAll(n.Children)}
	case *filterlang.Or:
		return &wireFilter{Or: encodeAll(n.Children)}
	case *filterlang.Not:
		return &wireFilter{Not: encodeFilter(n.Child)}
	case *filterlang.Cond:
		return &wireFilter{Field: n.Field, Type: n.Type, Op: n.Op, Value: encodeValue(n.Value)}
	}
	return nil
}

func encodeAll(fs []filterlang.Filter) []wireFilter {
	out := make([]wireFilter, len(fs))
	for i, f := range fs {
		out[i] = *encodeFilter(f)
	}
	return out
}

func encodeValue(v any) any {
	switch x := v.(type) {
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = encodeValue(e)
		}
		return out
	}
	return v
}

// decodeFilter rebuilds the filterlang.Filter from its plan-body form.
func decodeFilter(w *wireFilter) (filterlang.Filter, error) {
	switch {
	case w == nil:
		return nil, nil
	case w.And != nil:
		cs, err := decodeAll(w.And)
		return &filterlang.And{Children: cs}, err
	case w.Or != nil:
		cs, err := decodeAll(w.Or)
		return &filterlang.Or{Children: cs}, err
	case w.Not != nil:
		c, err := decodeFilter(w.Not)
		return &filterlang.Not{Child: c}, err
	}
	v, err := decodeValue(w.Type, w.Op, w.Value)
	return &filterlang.Cond{Field: w.Field, Type: w.Type, Op: w.Op, Value: v}, err
}

func decodeAll(ws []wireFilter) ([]filterlang.Filter, error) {
	out := make([]filterlang.Filter, len(ws))
	for i := range ws {
		f, err := decodeFilter(&ws[i])
		if err != nil {
			return nil, err
		}
		out[i] = f
	}
	return out, nil
}

func decodeValue(t filterlang.FieldType, op filterlang.Op, v any) (any, error) {
	switch op {
	case filterlang.OpExists:
		b, _ := v.(bool)
		return b, nil
	case filterlang.OpIn, filterlang.OpNin:
		xs, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%w: %s expects a list", errBadPlan, op)
		}
		out := make([]any, len(xs))
		for i, x := range xs {
			e, err := decodeScalar(t, x)
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	}
	return decodeScalar(t, v)
}

func decodeScalar(t filterlang.FieldType, v any) (any, error) {
	n, isNum := v.(json.Number)
	switch {
	case t == filterlang.TypeInt && isNum:
		return n.Int64()
	case t == filterlang.TypeFloat && isNum:
		return n.Float64()
	case t == filterlang.TypeDate:
		s, _ := v.(string)
		return time.Parse(time.RFC3339Nano, s)
	}
	return v, nil
}
