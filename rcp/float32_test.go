package rcp

import (
	"encoding/json"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

// want32 is the reference: strconv's shortest float32 through the
// encoding/json layout of appendFloat.
func want32(f float32) string { return string(appendFloat(nil, float64(f), 32)) }

func TestAppendFloat32(t *testing.T) {
	cases := []struct {
		f    float32
		want string
	}{
		{0.1, "0.1"},
		{-0.1, "-0.1"},
		{1, "1"},
		{0.3, "0.3"},
		{1.0 / 3, "0.33333334"},
		{16777216, "16777216"},
		{16777217, "16777216"},
		{100, "100"},
		{123456789, "123456790"},
		{3.4028235e38, "3.4028235e+38"},
		{1e21, "1e+21"},
		{9.999999e20, "999999900000000000000"},
		{1e-6, "0.000001"},
		{9.999999e-7, "9.999999e-7"},
		{1e-7, "1e-7"},
		{math.SmallestNonzeroFloat32, "1e-45"},
		{0, "0"},
		{float32(math.Copysign(0, -1)), "-0"},
		{-0.012345679, "-0.012345679"},
		{0.5, "0.5"},
		{0.0009765625, "0.0009765625"}, // 2^-10: the narrower lower interval
		{1048576, "1048576"},
		{2.5e-6, "0.0000025"},
	}
	for _, c := range cases {
		got := string(AppendFloat32([]byte("x"), c.f))
		if got != "x"+c.want {
			t.Errorf("AppendFloat32(%v) = %q, want %q", c.f, got[1:], c.want)
		}
		if std, err := json.Marshal(c.f); err != nil || string(std) != c.want {
			t.Errorf("encoding/json writes %v as %q (%v), the case says %q", c.f, std, err, c.want)
		}
	}
}

// TestAppendFloat32Sweep compares AppendFloat32 with strconv on every
// power of two's neighbourhood and on a strided sample of all 2^32 bit
// patterns (about four million values, a different offset each run);
// RCP_FLOAT32_ALL=1 compares every finite float32.
func TestAppendFloat32Sweep(t *testing.T) {
	check := func(u uint32) bool {
		f := math.Float32frombits(u)
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return true
		}
		if got, want := string(AppendFloat32(nil, f)), want32(f); got != want {
			t.Errorf("AppendFloat32(math.Float32frombits(%#08x)) = %s, want %s", u, got, want)
			return false
		}
		return true
	}
	for e := uint32(0); e < 255; e++ {
		for d := uint32(0); d < 64; d++ {
			check(e<<23 | d)
			check(e<<23 | (1<<23 - 1 - d))
			check(1<<31 | e<<23 | d)
		}
	}
	stride, start := uint64(1021), uint64(1)
	if os.Getenv("RCP_FLOAT32_ALL") == "1" {
		stride = 1
	} else {
		start = rand.Uint64N(stride)
		t.Logf("sweep offset %d (stride %d)", start, stride)
	}
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for w := range workers {
		wg.Go(func() {
			var buf []byte
			for u := start + uint64(w)*stride; u < 1<<32; u += uint64(workers) * stride {
				f := math.Float32frombits(uint32(u))
				if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
					continue
				}
				buf = AppendFloat32(buf[:0], f)
				if want := want32(f); string(buf) != want {
					mu.Lock()
					if failed++; failed <= 10 {
						t.Errorf("AppendFloat32(math.Float32frombits(%#08x)) = %s, want %s", u, buf, want)
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if failed > 0 {
		t.Errorf("%d values differ", failed)
	}
}

// TestG1Pow10 recomputes every entry of the table from its definition.
func TestG1Pow10(t *testing.T) {
	ten := big.NewInt(10)
	for k := g1MinK; k <= g1MaxK; k++ {
		r := flog2pow10(-k) - 125
		g := new(big.Int)
		if k <= 0 {
			g.Exp(ten, big.NewInt(int64(-k)), nil)
			if r >= 0 {
				g.Rsh(g, uint(r))
			} else {
				g.Lsh(g, uint(-r))
			}
		} else {
			g.Lsh(big.NewInt(1), uint(-r))
			g.Quo(g, new(big.Int).Exp(ten, big.NewInt(int64(k)), nil))
		}
		g.Add(g, big.NewInt(1))
		if g.BitLen() != 126 {
			t.Fatalf("k=%d: g has %d bits, want 126", k, g.BitLen())
		}
		if want := g.Rsh(g, 63).Uint64(); g1pow10[k-g1MinK] != want {
			t.Errorf("g1pow10 at k=%d = %#x, want %#x", k, g1pow10[k-g1MinK], want)
		}
	}
	// the table spans the k of every float32 exponent
	for q := -149; q <= 104; q++ {
		for _, k := range []int{flog10pow2(q), flog10threeQuartersPow2(q)} {
			if k < g1MinK || k > g1MaxK {
				t.Errorf("q=%d needs k=%d outside [%d, %d]", q, k, g1MinK, g1MaxK)
			}
		}
	}
}

func FuzzAppendFloat32(f *testing.F) {
	for _, u := range []uint32{0x3dcccccd, 0x4b800000, 0x358637bd, 0x7f7fffff, 0x00000001, 0x80000000, 0x3a800000} {
		f.Add(u)
	}
	f.Fuzz(func(t *testing.T, u uint32) {
		v := math.Float32frombits(u)
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return
		}
		got := AppendFloat32(nil, v)
		if want := want32(v); string(got) != want {
			t.Fatalf("AppendFloat32(math.Float32frombits(%#08x)) = %s, want %s", u, got, want)
		}
		back, err := strconv.ParseFloat(string(got), 32)
		if err != nil || float32(back) != v {
			t.Fatalf("%s reads back as %v (%v), want %v", got, back, err, v)
		}
	})
}

func BenchmarkAppendFloat32(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]float32, 384)
	for i := range v {
		v[i] = float32(r.NormFloat64() * 0.05)
	}
	buf := make([]byte, 0, 8192)
	b.Run("schubfach", func(b *testing.B) {
		for b.Loop() {
			buf = buf[:0]
			for _, f := range v {
				buf = AppendFloat32(buf, f)
			}
		}
	})
	b.Run("strconv", func(b *testing.B) {
		for b.Loop() {
			buf = buf[:0]
			for _, f := range v {
				buf = appendFloat(buf, float64(f), 32)
			}
		}
	})
}

func TestFloat32Bounds(t *testing.T) {
	if bitsOf1e6 != math.Float32bits(1e-6) || bitsOf1e21 != math.Float32bits(1e21) {
		t.Fatalf("bitsOf1e6 %#x, bitsOf1e21 %#x: want %#x, %#x", bitsOf1e6, bitsOf1e21, math.Float32bits(1e-6), math.Float32bits(1e21))
	}
}
