package rcp

import (
	"math"
	"math/bits"
	"slices"
)

// AppendFloat32 appends f as encoding/json encodes a float32: the
// shortest decimal that reads back as f (the closest of those, ties to
// even digits), without an exponent in [1e-6, 1e21) and in exponent form
// outside it, a one-digit negative exponent written without its leading
// zero. f must be finite.
//
// Query vectors are hundreds of float32 values each, written on every
// dense request, so the common case (a normal value in [1e-6, 1e21)) is
// computed by Schubfach (R. Giulietti, "The Schubfach way to render
// doubles", 2020) with one 64×64-bit product per bound, about a third of
// what strconv.AppendFloat costs; every other value goes through
// appendFloat. The two agree on every float32 (TestAppendFloat32All).
func AppendFloat32(b []byte, f float32) []byte {
	u := math.Float32bits(f)
	if abs := u &^ (1 << 31); abs < bitsOf1e6 || abs >= bitsOf1e21 {
		return appendFloat(b, float64(f), 32)
	}
	if u>>31 != 0 {
		b = append(b, '-')
	}
	// abs ≥ 1e-6 is a normal float32: its value is c·2^q
	c := uint32(1)<<23 | u&(1<<23-1)
	q := int(u>>23&0xff) - 150
	if q < 0 && q > -24 && c&(1<<uint(-q)-1) == 0 {
		// an integer below 2^24: its own digits are the shortest
		return appendDecimal(b, c>>uint(-q), 0)
	}
	digits, exp10 := schubfach32(q, c)
	return appendDecimal(b, digits, exp10)
}

// bitsOf1e6 and bitsOf1e21 bound the bits of the float32 magnitudes
// written without an exponent (positive float32 values order as their
// bits do).
const (
	bitsOf1e6  = 0x358637bd
	bitsOf1e21 = 0x6258d727
)

// AppendFloat64 appends f as encoding/json encodes a float64: the
// shortest decimal that reads back as f, without an exponent in [1e-6,
// 1e21) and in exponent form outside it, a one-digit negative exponent
// written without its leading zero. f must be finite.
func AppendFloat64(b []byte, f float64) []byte { return appendFloat(b, f, 64) }

// schubfach32 returns the shortest decimal digits·10^exp10 in the
// rounding interval of the normal float32 c·2^q, the closest to it when
// several are, on a tie the even one (the upper one for a power of two).
func schubfach32(q int, c uint32) (digits uint32, exp10 int) {
	out := uint64(c & 1)
	cb := uint64(c) << 2
	cbr := cb + 2
	var cbl uint64
	var k int
	if c != 1<<23 || q == -149 {
		cbl = cb - 2
		k = flog10pow2(q)
	} else {
		// the lower neighbour is half as far away
		cbl = cb - 1
		k = flog10threeQuartersPow2(q)
	}
	h := uint(q + flog2pow10(-k) + 33)
	g := g1pow10[k-g1MinK] + 1
	vb := rop32(g, cb<<h)
	vbl := rop32(g, cbl<<h)
	vbr := rop32(g, cbr<<h)
	s := vb >> 2
	if s >= 100 {
		// one digit fewer, when exactly one of its two candidates fits
		sp10 := 10 * (s / 10)
		tp10 := sp10 + 10
		upin := vbl+out <= sp10<<2
		wpin := tp10<<2+out <= vbr
		if upin != wpin {
			if upin {
				return uint32(sp10), k
			}
			return uint32(tp10), k
		}
	}
	t := s + 1
	uin := vbl+out <= s<<2
	win := t<<2+out <= vbr
	if uin != win {
		if uin {
			return uint32(s), k
		}
		return uint32(t), k
	}
	// the closer of s and t; on a tie the even one, except that a power
	// of two rounds up as strconv's Dragonbox does
	cmp := int64(vb) - int64((s+t)<<1)
	if cmp < 0 || cmp == 0 && s&1 == 0 && c != 1<<23 {
		return uint32(s), k
	}
	return uint32(t), k
}

// rop32 is round-to-odd of the product g·cp scaled down by 2^95: the
// high bits, with a sticky 1 when any bit below them is set.
func rop32(g, cp uint64) uint64 {
	x1, _ := bits.Mul64(g, cp)
	vbp := x1 >> 31
	return vbp | (x1&(1<<32-1)+(1<<32-1))>>32
}

// flog10pow2 is ⌊q·log10(2)⌋ for |q| ≤ 5456721.
func flog10pow2(q int) int { return int((int64(q) * 661_971_961_083) >> 41) }

// flog10threeQuartersPow2 is ⌊log10(3/4·2^q)⌋ for |q| ≤ 5456721.
func flog10threeQuartersPow2(q int) int {
	return int((int64(q)*661_971_961_083 - 274_743_187_321) >> 41)
}

// flog2pow10 is ⌊e·log2(10)⌋ for |e| ≤ 1838394.
func flog2pow10(e int) int { return int((int64(e) * 913_124_641_741) >> 38) }

// appendDecimal appends digits·10^exp10 (digits > 0) as strconv's 'f'
// format with the shortest precision writes it: trailing zeros of the
// digits dropped, no exponent, a leading "0." below one. It writes in
// place, each digit once.
func appendDecimal(b []byte, digits uint32, exp10 int) []byte {
	for digits%10 == 0 {
		digits /= 10
		exp10++
	}
	n := decimalLen(digits)
	point := n + exp10 // digits before the decimal point
	at, size := 0, point
	switch {
	case point <= 0:
		at = 2 - point
		size = at + n
	case point < n:
		size = n + 1
	}
	start := len(b)
	b = slices.Grow(b, size)[:start+size]
	out := b[start:]
	writeDigits(out[at:at+n], digits)
	switch {
	case point <= 0:
		out[0], out[1] = '0', '.'
		for i := 2; i < at; i++ {
			out[i] = '0'
		}
	case point < n:
		for i := n; i > point; i-- {
			out[i] = out[i-1]
		}
		out[point] = '.'
	default:
		for i := n; i < point; i++ {
			out[i] = '0'
		}
	}
	return b
}

// writeDigits fills dst, exactly decimalLen(v) bytes, with v's digits,
// four at a time so that the divisions of one step do not wait on each
// other.
func writeDigits(dst []byte, v uint32) {
	i := len(dst)
	for v >= 10000 {
		r := v % 10000
		v /= 10000
		hi, lo := r/100, r%100
		i -= 4
		d := dst[i : i+4 : i+4]
		d[0], d[1], d[2], d[3] = digitPairs[hi][0], digitPairs[hi][1], digitPairs[lo][0], digitPairs[lo][1]
	}
	if v >= 100 {
		hi, lo := v/100, v%100
		dst[i-2], dst[i-1] = digitPairs[lo][0], digitPairs[lo][1]
		i -= 2
		v = hi
	}
	if v >= 10 {
		dst[i-2], dst[i-1] = digitPairs[v][0], digitPairs[v][1]
	} else {
		dst[i-1] = byte('0' + v)
	}
}

// decimalLen is the number of decimal digits of v > 0.
func decimalLen(v uint32) int {
	n := bits.Len32(v) * 1233 >> 12 // ⌊log10(2^len)⌋, one too few at most
	if v < pow10u32[n] {
		return n
	}
	return n + 1
}

var pow10u32 = [...]uint32{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

// digitPairs[i] is i as two decimal digits.
var digitPairs = func() (t [100][2]byte) {
	for i := range t {
		t[i] = [2]byte{byte('0' + i/10), byte('0' + i%10)}
	}
	return t
}()

// the range of g1pow10: k of every float32's Schubfach step
const (
	g1MinK = -45
	g1MaxK = 31
)

// g1pow10[k-g1MinK] is the high 63 bits of g(k) = ⌊10^-k·2^-r⌋ + 1, r
// chosen so that 2^125 ≤ g(k) < 2^126 (Schubfach's g1).
var g1pow10 = [g1MaxK - g1MinK + 1]uint64{
	0x59aedfc10d7279c5, // -45
	0x47bf19673df52e37, // -44
	0x72cb5bd86321e38c, // -43
	0x5bd5e313828182d6, // -42
	0x4977e8dc68679bdf, // -41
	0x758ca7c70d7292fe, // -40
	0x5e0a1fd271287598, // -39
	0x4b3b4ca85a86c47a, // -38
	0x785ee10d5da46d90, // -37
	0x604be73de4838ad9, // -36
	0x4d0985cb1d3608ae, // -35
	0x7b426fab61f00de3, // -34
	0x629b8c891b267182, // -33
	0x4ee2d6d415b85ace, // -32
	0x7e37be2022c0914b, // -31
	0x64f964e68233a76f, // -30
	0x50c783eb9b5c85f2, // -29
	0x409f9cbc7c4a04c2, // -28
	0x6765c793fa10079d, // -27
	0x52b7d2dcc80cd2e4, // -26
	0x422ca8b0a00a4250, // -25
	0x69e10de76676d080, // -24
	0x54b40b1f852bda00, // -23
	0x43c33c1937564800, // -22
	0x6c6b935b8bbd4000, // -21
	0x56bc75e2d6310000, // -20
	0x4563918244f40000, // -19
	0x6f05b59d3b200000, // -18
	0x58d15e1762800000, // -17
	0x470de4df82000000, // -16
	0x71afd498d0000000, // -15
	0x5af3107a40000000, // -14
	0x48c2739500000000, // -13
	0x746a528800000000, // -12
	0x5d21dba000000000, // -11
	0x4a817c8000000000, // -10
	0x7735940000000000, // -9
	0x5f5e100000000000, // -8
	0x4c4b400000000000, // -7
	0x7a12000000000000, // -6
	0x61a8000000000000, // -5
	0x4e20000000000000, // -4
	0x7d00000000000000, // -3
	0x6400000000000000, // -2
	0x5000000000000000, // -1
	0x4000000000000000, // 0
	0x6666666666666666, // 1
	0x51eb851eb851eb85, // 2
	0x4189374bc6a7ef9d, // 3
	0x68db8bac710cb295, // 4
	0x53e2d6238da3c211, // 5
	0x431bde82d7b634da, // 6
	0x6b5fca6af2bd215e, // 7
	0x55e63b88c230e77e, // 8
	0x44b82fa09b5a52cb, // 9
	0x6df37f675ef6eadf, // 10
	0x57f5ff85e592557f, // 11
	0x465e6604b7a84465, // 12
	0x709709a125da0709, // 13
	0x5a126e1a84ae6c07, // 14
	0x480ebe7b9d58566c, // 15
	0x734aca5f6226f0ad, // 16
	0x5c3bd5191b525a24, // 17
	0x49c97747490eae83, // 18
	0x760f253edb4ab0d2, // 19
	0x5e72843249088d75, // 20
	0x4b8ed0283a6d3df7, // 21
	0x78e480405d7b9658, // 22
	0x60b6cd004ac94513, // 23
	0x4d5f0a66a23a9da9, // 24
	0x7bcb43d769f762a8, // 25
	0x63090312bb2c4eed, // 26
	0x4f3a68dbc8f03f24, // 27
	0x7ec3daf941806506, // 28
	0x65697bfa9acd1d9f, // 29
	0x51212ffbaf0a7e18, // 30
	0x40e7599625a1fe7a, // 31
}
