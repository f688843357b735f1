package statestore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/rcp-sidecar/rcp-sidecar/integration/itest"
	"github.com/rcp-sidecar/rcp-sidecar/internal/session"
	"github.com/rcp-sidecar/rcp-sidecar/internal/statestore"
)

// serverURL is the Valkey/Redis server integration/valkey/start.sh runs.
func serverURL(t *testing.T) string {
	return itest.RequireEnv(t, "RCP_VALKEY_URL", "run integration/valkey/start.sh and source integration/.work/valkey.env")
}

// open returns a store under a prefix of its own, and a plain client to
// inspect what it wrote.
func open(t *testing.T, url string, o statestore.Options) (*statestore.Store, *redis.Client, string) {
	t.Helper()
	o.URL = url
	if o.Prefix == "" {
		o.Prefix = fmt.Sprintf("rcptest:%s:%d:", strings.ReplaceAll(t.Name(), "/", "."), time.Now().UnixNano())
	}
	s, err := statestore.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	opt, err := redis.ParseURL(serverURL(t))
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() {
		ctx := context.Background()
		keys, _ := rdb.Keys(ctx, o.Prefix+"*").Result()
		for _, k := range keys {
			rdb.Del(ctx, k)
		}
		_ = rdb.Close()
	})
	return s, rdb, o.Prefix
}

func tiered(s session.Shared, scope string, o session.Options) *session.Tiered {
	return session.NewTiered(session.New(o), s, scope)
}

// TestSessionNamespaces: through the shared store, a namespace (caller and
// tenant) can neither read nor fill another's session set, even with the
// same session id and the same hits, and no two different (namespace, id)
// pairs share a set however their bytes are arranged; another backend's
// sessions are apart too.
func TestSessionNamespaces(t *testing.T) {
	s, rdb, prefix := open(t, serverURL(t), statestore.Options{Timeout: time.Second})
	ctx := context.Background()
	a := tiered(s, "docs", session.Options{})
	other := tiered(s, "other-backend", session.Options{})
	type ns struct{ ns, id string }
	alice := ns{"key-a\x00tenant-a\x00", "s1"}
	pairs := []struct {
		name string
		b    ns
		tb   *session.Tiered
	}{
		{"another tenant, same session id", ns{"key-a\x00tenant-b\x00", "s1"}, a},
		{"another key, same tenant and session id", ns{"key-b\x00tenant-a\x00", "s1"}, a},
		{"namespace and id bytes shifted", ns{"key-a\x00tenant-a\x00s", "1"}, a},
		{"id carries the separator", ns{"key-a\x00tenant-a", "\x00s1"}, a},
		{"another backend, same namespace and id", alice, other},
	}
	hits := []string{"i:doc-1", "i:doc-2", "i:doc-3"}
	if fb := a.Record(ctx, alice.ns, alice.id, hits); fb {
		t.Fatal("Record fell back on a live store")
	}
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			if p.tb.SetName(p.b.ns, p.b.id) == a.SetName(alice.ns, alice.id) {
				t.Fatalf("(%q,%q) names alice's set", p.b.ns, p.b.id)
			}
			seen, fb := p.tb.Seen(ctx, p.b.ns, p.b.id, hits)
			if fb {
				t.Fatal("Seen fell back on a live store")
			}
			for i, v := range seen {
				if v {
					t.Fatalf("(%q,%q) reads alice's %s", p.b.ns, p.b.id, hits[i])
				}
			}
			// Filling: what p records never shows in alice's set.
			mine := []string{"i:doc-9-" + p.name}
			p.tb.Record(ctx, p.b.ns, p.b.id, mine)
			if seen, _ := a.Seen(ctx, alice.ns, alice.id, mine); seen[0] {
				t.Fatalf("(%q,%q) filled alice's set", p.b.ns, p.b.id)
			}
		})
	}
	seen, _ := a.Seen(ctx, alice.ns, alice.id, hits)
	for i, v := range seen {
		if !v {
			t.Fatalf("alice no longer sees %s", hits[i])
		}
	}
	if n := rdb.ZCard(ctx, prefix+"s:"+a.SetName(alice.ns, alice.id)).Val(); n != int64(len(hits)) {
		t.Fatalf("alice's set holds %d members, want %d", n, len(hits))
	}
}

// TestSessionAcrossReplicas: what one replica's store recorded, another
// replica's (its own client, its own in-process store) suppresses.
func TestSessionAcrossReplicas(t *testing.T) {
	url := serverURL(t)
	s1, _, prefix := open(t, url, statestore.Options{Timeout: time.Second})
	s2, _, _ := open(t, url, statestore.Options{Timeout: time.Second, Prefix: prefix})
	ctx := context.Background()
	r1, r2 := tiered(s1, "docs", session.Options{}), tiered(s2, "docs", session.Options{})
	r1.Record(ctx, "n", "s", []string{"i:a", "i:b"})
	seen, fb := r2.Seen(ctx, "n", "s", []string{"i:a", "i:c", "i:b"})
	if fb || !seen[0] || seen[1] || !seen[2] {
		t.Fatalf("replica 2 sees %v (fallback %v), want [true false true]", seen, fb)
	}
}

// TestSessionBounds: a set keeps its newest max_ids members and an idle
// TTL; an index keeps its max_sessions most recently used sets, and the
// others are deleted from the store.
func TestSessionBounds(t *testing.T) {
	s, rdb, prefix := open(t, serverURL(t), statestore.Options{Timeout: time.Second})
	ctx := context.Background()
	tb := tiered(s, "docs", session.Options{MaxKeys: 4, MaxSessions: 3, TTL: time.Minute})
	var keys []string
	for i := range 10 {
		keys = append(keys, fmt.Sprintf("i:%d", i))
		tb.Record(ctx, "n", "s", keys[i:i+1])
	}
	set := prefix + "s:" + tb.SetName("n", "s")
	if n := rdb.ZCard(ctx, set).Val(); n != 4 {
		t.Fatalf("set holds %d members, want max_ids 4", n)
	}
	seen, _ := tb.Seen(ctx, "n", "s", keys)
	for i, v := range seen {
		if v != (i >= 6) {
			t.Fatalf("key %d seen=%v; want only the newest 4 (6..9) kept", i, v)
		}
	}
	if ttl := rdb.PTTL(ctx, set).Val(); ttl <= 0 || ttl > time.Minute {
		t.Fatalf("set TTL %v, want within (0, 1m]", ttl)
	}
	for i := range 6 {
		tb.Record(ctx, "n", fmt.Sprint("s", i), []string{"i:x"})
	}
	live := 0
	for i := range 6 {
		if rdb.Exists(ctx, prefix+"s:"+tb.SetName("n", fmt.Sprint("s", i))).Val() == 1 {
			live++
		}
	}
	if live > 3 {
		t.Fatalf("%d of 6 sessions still stored, want at most max_sessions 3", live)
	}
	if rdb.Exists(ctx, prefix+"s:"+tb.SetName("n", "s5")).Val() != 1 {
		t.Fatal("the most recent session was evicted")
	}
}

// TestNothingSecretStored: after sessions and rate limits were used, no
// key name or value in the store contains a caller, tenant, session id,
// hit id or key id.
func TestNothingSecretStored(t *testing.T) {
	s, rdb, prefix := open(t, serverURL(t), statestore.Options{Timeout: time.Second})
	ctx := context.Background()
	tb := tiered(s, "docs", session.Options{})
	raw := []string{"caller-key-id", "tenant-zeta", "session-omega", "doc-with-text-inside", "docs"}
	tb.Record(ctx, raw[0]+"\x00"+raw[1]+"\x00", raw[2], []string{"i:" + raw[3], "d:" + raw[3]})
	if _, _, err := s.Allow(ctx, "0f0f", 5, 5); err != nil {
		t.Fatal(err)
	}
	keys, err := rdb.Keys(ctx, "*"+prefix+"*").Result()
	if err != nil || len(keys) < 3 {
		t.Fatalf("keys %v, err %v: want a set, an index and a limit", keys, err)
	}
	var dump bytes.Buffer
	for _, k := range keys {
		dump.WriteString(k + "\n")
		switch rdb.Type(ctx, k).Val() {
		case "zset":
			for _, m := range rdb.ZRange(ctx, k, 0, -1).Val() {
				dump.WriteString(m + "\n")
			}
		case "string":
			dump.WriteString(rdb.Get(ctx, k).Val() + "\n")
		}
	}
	for _, r := range raw {
		if bytes.Contains(dump.Bytes(), []byte(r)) {
			t.Fatalf("the store holds %q:\n%s", r, dump.String())
		}
	}
}

// TestRateGlobal: three stores (three replicas) on one server admit one
// key's requests as one GCRA limit: over a bounded run, at most burst +
// rps·elapsed (+1 for the edge), and at least the burst.
func TestRateGlobal(t *testing.T) {
	url := serverURL(t)
	s0, _, prefix := open(t, url, statestore.Options{Timeout: time.Second})
	stores := []*statestore.Store{s0}
	for range 2 {
		s, _, _ := open(t, url, statestore.Options{Timeout: time.Second, Prefix: prefix})
		stores = append(stores, s)
	}
	const rps, burst = 20, 20
	ctx := context.Background()
	start := time.Now()
	var admitted, refused int
	var lastWait time.Duration
	for i := 0; i < 300 && time.Since(start) < 700*time.Millisecond; i++ {
		wait, ok, err := stores[i%3].Allow(ctx, "key-hash", rps, burst)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			admitted++
		} else {
			refused++
			lastWait = wait
		}
	}
	elapsed := time.Since(start)
	limit := burst + int(rps*elapsed.Seconds()) + 1
	if admitted > limit || admitted < burst {
		t.Fatalf("admitted %d over %v across 3 replicas, want between %d and %d", admitted, elapsed, burst, limit)
	}
	if refused == 0 || lastWait <= 0 || lastWait > time.Second/rps+10*time.Millisecond {
		t.Fatalf("refused %d, last wait %v: want refusals with a wait of about 1/rps", refused, lastWait)
	}
}

// blackhole is a fake server (named as one): it accepts connections and
// never answers — what a frozen store looks like from the client — or,
// when forwarding, relays to a real server.
type blackhole struct {
	ln      net.Listener
	forward atomic.Pointer[string]
	mu      sync.Mutex
	conns   []net.Conn
}

func newBlackhole(t *testing.T) *blackhole {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &blackhole{ln: ln}
	t.Cleanup(func() { _ = ln.Close(); b.cut() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b.mu.Lock()
			b.conns = append(b.conns, c)
			b.mu.Unlock()
			if to := b.forward.Load(); to != nil {
				go relay(c, *to)
			}
		}
	}()
	return b
}

func relay(c net.Conn, to string) {
	up, err := net.Dial("tcp", to)
	if err != nil {
		_ = c.Close()
		return
	}
	go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
	_, _ = io.Copy(c, up)
	_ = c.Close()
}

// cut closes every connection (new ones are then held or relayed as the
// mode says).
func (b *blackhole) cut() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.conns {
		_ = c.Close()
	}
	b.conns = nil
}

func (b *blackhole) url() string { return "redis://" + b.ln.Addr().String() + "/0" }

// logCount counts log records containing a substring.
type logCount struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logCount) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}
func (l *logCount) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.buf.String(), s)
}

// TestFaultsBounded: against a store that never answers, every call
// returns within the timeout (plus scheduling slack) with an error the
// caller falls back on; after FailureThreshold failures the breaker
// answers at once; a request's budget makes later calls of a request
// that saw a failure skip the store; when the store answers again, the
// breaker closes by itself. Each transition is logged once.
func TestFaultsBounded(t *testing.T) {
	real := strings.TrimPrefix(strings.TrimSuffix(serverURL(t), "/0"), "redis://")
	bh := newBlackhole(t)
	logs := &logCount{}
	const timeout = 40 * time.Millisecond
	s, err := statestore.Open(statestore.Options{URL: bh.url(), Timeout: timeout, FailureThreshold: 3, OpenFor: 300 * time.Millisecond,
		Prefix: fmt.Sprintf("rcptest:faults:%d:", time.Now().UnixNano()), Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	slack := 150 * time.Millisecond // -race on two busy cores
	for i := range 3 {
		start := time.Now()
		_, _, err := s.Allow(ctx, "k", 10, 10)
		if took := time.Since(start); err == nil || took > timeout+slack {
			t.Fatalf("call %d to a frozen store: err %v after %v, want an error within %v", i, err, took, timeout+slack)
		}
	}
	if s.State() != "open" {
		t.Fatalf("breaker %s after 3 timeouts, want open", s.State())
	}
	start := time.Now()
	if _, _, err := s.Allow(ctx, "k", 10, 10); !errors.Is(err, statestore.ErrUnavailable) || time.Since(start) > 20*time.Millisecond {
		t.Fatalf("open breaker: err %v after %v, want ErrUnavailable at once", err, time.Since(start))
	}
	if n := logs.count("shared state store unavailable"); n != 1 {
		t.Fatalf("%d 'unavailable' records, want 1", n)
	}

	// The store answers again: the breaker's trial closes it.
	bh.forward.Store(&real)
	bh.cut()
	deadline := time.Now().Add(5 * time.Second)
	for s.State() != "closed" {
		if time.Now().After(deadline) {
			t.Fatalf("breaker still %s 5s after the store came back", s.State())
		}
		_, _, _ = s.Allow(ctx, "k", 10, 10)
		time.Sleep(50 * time.Millisecond)
	}
	if _, ok, err := s.Allow(ctx, "k2", 10, 10); err != nil || !ok {
		t.Fatalf("after recovery: ok %v err %v", ok, err)
	}
	if n := logs.count("available again"); n != 1 {
		t.Fatalf("%d 'available again' records, want 1", n)
	}

	// A request whose call failed skips the store for its other calls.
	bh.forward.Store(nil)
	bh.cut()
	rctx := statestore.WithBudget(ctx)
	start = time.Now()
	_, _, err1 := s.Allow(rctx, "k", 10, 10)
	_, err2 := s.Seen(rctx, "set", "idx", []string{"m"}, time.Minute)
	err3 := s.Add(rctx, "set", "idx", []string{"m"}, time.Minute, 10, 10)
	if took := time.Since(start); err1 == nil || !errors.Is(err2, statestore.ErrUnavailable) || !errors.Is(err3, statestore.ErrUnavailable) || took > timeout+slack {
		t.Fatalf("budgeted request: errs %v / %v / %v after %v, want all failing within one timeout %v", err1, err2, err3, took, timeout+slack)
	}
}

// TestOpenModes: each mode takes the URL shape it can serve; nothing is
// dialled at Open.
func TestOpenModes(t *testing.T) {
	tests := []struct {
		url, mode, master, err string
	}{
		{"redis://127.0.0.1:1/2", "", "", ""},
		{"rediss://cache:6380", "standalone", "", ""},
		{"redis://s1:26379?addr=s2:26379", "sentinel", "mymaster", ""},
		{"redis://n1:6379?addr=n2:6379", "cluster", "", ""},
		{"redis://a:1?addr=b:2", "standalone", "", "one address"},
		{"redis://s1:26379", "sentinel", "", "master"},
		{"redis://n1:6379/3", "cluster", "", "database"},
		{"redis://n1:6379", "ring", "", "not standalone"},
		{"http://n1:6379", "", "", "url"},
	}
	for _, tc := range tests {
		s, err := statestore.Open(statestore.Options{URL: tc.url, Mode: tc.mode, Master: tc.master})
		if tc.err == "" {
			if err != nil {
				t.Errorf("%s %s: %v", tc.mode, tc.url, err)
				continue
			}
			_ = s.Close()
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s %s: err %v, want %q", tc.mode, tc.url, err, tc.err)
		}
	}
}
