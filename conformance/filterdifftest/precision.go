package filterdifftest

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Numeric precisions of the engines' number types, as the oracle rounds
// them (§8 as the sidecar documents it: a document value and a filter
// value are both rounded to the field's stored precision before they are
// compared).
const (
	PrecDouble = "double"
	PrecFloat  = "float"
	PrecHalf   = "half_float"
	PrecScaled = "scaled_float"
)

// Float32 returns the float32 nearest to the decimal s, as a float64.
func Float32(s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 32)
	if err != nil {
		return 0, err
	}
	return float64(float32(f)), nil
}

// Half returns the IEEE 754 binary16 value nearest to f (ties to even) as
// a float64: ±Inf beyond the largest half (65504) plus half a step, and
// subnormals below 2^-14.
func Half(f float32) float64 {
	x := float64(f)
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	sign := 1.0
	if x < 0 {
		sign, x = -1, -x
	}
	_, exp := math.Frexp(x) // x = frac·2^exp, frac in [0.5, 1)
	e := exp - 1            // x in [2^e, 2^(e+1))
	if e < -14 {
		e = -14 // subnormal: the step stays 2^-24
	}
	step := math.Ldexp(1, e-10)
	r := math.RoundToEven(x/step) * step
	if r > 65504 {
		return sign * math.Inf(1)
	}
	return sign * r
}

// JavaRound is Java's Math.round on a double: the closest integer, ties
// toward positive infinity (floor(x + 1/2) computed exactly).
func JavaRound(x float64) float64 {
	f := math.Floor(x)
	if x-f >= 0.5 {
		return f + 1
	}
	return f
}

// RoundDecimal rounds the decimal number s of a source document to the
// stored precision of a float-family field, as the engine parses it:
// double as parsed, float to the float32 nearest to the decimal,
// half_float to that float32's nearest half, and scaled_float to the
// integer JavaRound(double(s)·scale) (returned as a float64, exact below
// 2^53).
func RoundDecimal(prec string, scale float64, s string) (float64, error) {
	switch prec {
	case PrecDouble:
		return strconv.ParseFloat(strings.TrimSpace(s), 64)
	case PrecFloat:
		return Float32(s)
	case PrecHalf:
		f, err := Float32(s)
		return Half(float32(f)), err
	case PrecScaled:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		return JavaRound(f * scale), err
	}
	return 0, fmt.Errorf("filterdiff: unknown float precision %q", prec)
}

// RoundDouble rounds a filter value, which RCP reads as a double (§4.6),
// to the stored precision of a float-family field: float and half_float
// round the double (not its decimal text) to the nearest float32, which a
// decimal exactly between two doubles' float32 neighbours can tell apart.
func RoundDouble(prec string, scale float64, x float64) (float64, error) {
	switch prec {
	case PrecDouble:
		return x, nil
	case PrecFloat:
		return float64(float32(x)), nil
	case PrecHalf:
		return Half(float32(x)), nil
	case PrecScaled:
		return JavaRound(x * scale), nil
	}
	return 0, fmt.Errorf("filterdiff: unknown float precision %q", prec)
}

// Integer parses a decimal integer of any size.
func Integer(s string) (*big.Int, error) {
	n, ok := new(big.Int).SetString(strings.TrimSpace(s), 10)
	if !ok {
		return nil, fmt.Errorf("filterdiff: %q is not an integer", s)
	}
	return n, nil
}

// intRange is the closed range of an integer type.
type intRange struct{ lo, hi *big.Int }

func bigPow2(n uint) *big.Int { return new(big.Int).Lsh(big.NewInt(1), n) }

// intRanges are the ranges of the engines' integer types.
var intRanges = map[string]intRange{
	"long":          {new(big.Int).Neg(bigPow2(63)), new(big.Int).Sub(bigPow2(63), big.NewInt(1))},
	"integer":       {big.NewInt(math.MinInt32), big.NewInt(math.MaxInt32)},
	"short":         {big.NewInt(math.MinInt16), big.NewInt(math.MaxInt16)},
	"byte":          {big.NewInt(math.MinInt8), big.NewInt(math.MaxInt8)},
	"unsigned_long": {big.NewInt(0), new(big.Int).Sub(bigPow2(64), big.NewInt(1))},
}

// UTF16Len is the length of s in UTF-16 code units, the unit of
// ignore_above (Java String.length).
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
