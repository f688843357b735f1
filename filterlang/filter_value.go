package filterlang

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

// maxSafeInt is 2^53, the §4.6 bound on protocol integers.
const maxSafeInt = 1 << 53

// dateOnly is the ISO 8601 calendar-date form accepted besides RFC 3339.
const dateOnly = "2006-01-02"

// normaliseValue checks a leaf value against the operator and field type and
// returns its normalised form (see Cond), or a non-empty reason.
func normaliseValue(t FieldType, op Op, raw any) (any, string) {
	switch op {
	case OpExists:
		return existsValue(raw)
	case OpIn, OpNin:
		return setValue(t, raw)
	}
	if raw == nil {
		return nil, "value is required"
	}
	return scalarValue(t, raw)
}

// existsValue accepts a boolean; absent or null means true, as the
// reference builder emits it.
func existsValue(raw any) (any, string) {
	if raw == nil {
		return true, ""
	}
	b, ok := raw.(bool)
	if !ok {
		return nil, "exists takes a boolean value"
	}
	return b, ""
}

// setValue accepts a non-empty array of at most MaxFilterSetSize scalars,
// each of the field type.
func setValue(t FieldType, raw any) (any, string) {
	list, ok := raw.([]any)
	if !ok || len(list) == 0 {
		return nil, "value must be a non-empty array"
	}
	if len(list) > MaxFilterSetSize {
		return nil, fmt.Sprintf("value array exceeds %d elements", MaxFilterSetSize)
	}
	out := make([]any, len(list))
	for i, e := range list {
		v, msg := scalarValue(t, e)
		if msg != "" {
			return nil, fmt.Sprintf("element %d: %s", i, msg)
		}
		out[i] = v
	}
	return out, ""
}

// scalarValue normalises one scalar of field type t.
func scalarValue(t FieldType, raw any) (any, string) {
	switch t {
	case TypeKeyword, TypeText:
		if s, ok := raw.(string); ok {
			return s, ""
		}
		return nil, "value must be a string"
	case TypeBool:
		if b, ok := raw.(bool); ok {
			return b, ""
		}
		return nil, "value must be true or false"
	case TypeInt:
		return intValue(raw)
	case TypeFloat:
		return floatValue(raw)
	case TypeDate:
		return dateValue(raw)
	}
	return nil, fmt.Sprintf("no scalar value applies to a %q field", t)
}

// intValue accepts an integral JSON number within ±2^53 (§4.6).
func intValue(raw any) (any, string) {
	n, ok := raw.(json.Number)
	if !ok {
		return nil, "value must be an integer"
	}
	i, ok := safeInt(n)
	if !ok {
		return nil, "value must be an integer within ±2^53"
	}
	return i, ""
}

// safeInt parses n as an integer within ±2^53; "1e3" and "2.0" are integral.
func safeInt(n json.Number) (int64, bool) {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i, i >= -maxSafeInt && i <= maxSafeInt
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > maxSafeInt {
		return 0, false
	}
	return int64(f), true
}

// floatValue accepts any finite JSON number.
func floatValue(raw any) (any, string) {
	n, ok := raw.(json.Number)
	if !ok {
		return nil, "value must be a number"
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, "value must be a finite number"
	}
	return f, ""
}

// dateValue accepts an RFC 3339 string (or an ISO 8601 calendar date, read
// as midnight UTC) or integer epoch milliseconds within ±2^53 (§4.6), and
// returns the instant in UTC.
func dateValue(raw any) (any, string) {
	switch v := raw.(type) {
	case string:
		if t, ok := parseDate(v); ok {
			return t, ""
		}
		return nil, "value must be an RFC 3339 timestamp"
	case json.Number:
		if ms, ok := safeInt(v); ok {
			return time.UnixMilli(ms).UTC(), ""
		}
		return nil, "value must be integer epoch milliseconds within ±2^53"
	}
	return nil, "value must be an RFC 3339 string or epoch milliseconds"
}

// parseDate parses an RFC 3339 timestamp or an ISO 8601 calendar date.
func parseDate(s string) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), true
	}
	if t, err := time.Parse(dateOnly, s); err == nil {
		return t.UTC(), true
	}
	return time.Time{}, false
}

// ZeroBound is the signed zero to send as a range bound of op at zero to
// an engine whose float points tell -0.0 from +0.0, so that the range
// selects both zeros or neither, as §8's numeric comparison does (-0.0
// equals 0) whichever way the engine orders the two: gt +0.0 and lt -0.0
// exclude both, gte -0.0 and lte +0.0 include both.
func ZeroBound(op Op) float64 {
	if op == OpGte || op == OpLt {
		return math.Copysign(0, -1)
	}
	return 0
}
