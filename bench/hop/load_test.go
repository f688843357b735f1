package main

import (
	"os"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(n ...int) []time.Duration {
		out := make([]time.Duration, len(n))
		for i, v := range n {
			out[i] = time.Duration(v) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	// Expected values are the nearest-rank definition worked by hand:
	// rank = ceil(p/100 * N), 1-based.
	cases := []struct {
		name string
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one", ms(7), 99, 7 * time.Millisecond},
		{"p50 of 1..100", ms(hundred...), 50, 50 * time.Millisecond},
		{"p99 of 1..100", ms(hundred...), 99, 99 * time.Millisecond},
		{"p100 of 1..100", ms(hundred...), 100, 100 * time.Millisecond},
		{"p50 of four", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"p99 of four", ms(1, 2, 3, 4), 99, 4 * time.Millisecond},
		{"p1 of four", ms(1, 2, 3, 4), 1, 1 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := percentile(c.in, c.p); got != c.want {
				t.Fatalf("percentile(%v, %v) = %v, want %v", c.in, c.p, got, c.want)
			}
		})
	}
}

func TestParseStat(t *testing.T) {
	cases := []struct {
		name string
		line string
		want time.Duration
		ok   bool
	}{
		// utime 1234 + stime 66 ticks of 10 ms = 13 s.
		{"plain", "4242 (rcp-sidecar) S 1 4242 4242 0 -1 4194560 9000 0 0 0 1234 66 0 0 20 0 12 0 100 0", 13 * time.Second, true},
		{"name with spaces and parens", "77 (a) b (c) R 1 77 77 0 -1 0 0 0 0 0 5 5 0 0 20 0 1 0 1 0", 100 * time.Millisecond, true},
		{"truncated", "77 (x) R 1 2 3", 0, false},
		{"no name", "77 x R", 0, false},
		{"garbage times", "77 (x) R 1 77 77 0 -1 0 0 0 0 0 a b 0 0", 0, false},
		{"negative", "77 (x) R 1 77 77 0 -1 0 0 0 0 0 -5 1 0 0", 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := parseStat([]byte(c.line))
			if got != c.want || ok != c.ok {
				t.Fatalf("parseStat(%q) = %v, %v; want %v, %v", c.line, got, ok, c.want, c.ok)
			}
		})
	}
}

func TestPidCPUSelf(t *testing.T) {
	// Burn some CPU and check /proc/self agrees that time was used.
	before, ok := pidCPU(os.Getpid())
	if !ok {
		t.Fatal("cannot read /proc/<pid>/stat of this process")
	}
	deadline := time.Now().Add(150 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++
	}
	after, _ := pidCPU(os.Getpid())
	if after <= before {
		t.Fatalf("CPU did not advance: %v -> %v (spun %d)", before, after, x)
	}
}
