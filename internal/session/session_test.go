package session

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestStore(t *testing.T) {
	type step struct {
		advance time.Duration
		record  [3]string // ns, id, key ("" skips)
		seen    [3]string // ns, id, key asked
		want    bool
	}
	tests := []struct {
		name  string
		opts  Options
		steps []step
	}{
		{"recorded key is seen in its session", Options{}, []step{
			{record: [3]string{"k1", "s", "a"}, seen: [3]string{"k1", "s", "a"}, want: true},
			{seen: [3]string{"k1", "s", "b"}, want: false},
		}},
		{"another namespace with the same session id sees nothing", Options{}, []step{
			{record: [3]string{"k1", "s", "a"}, seen: [3]string{"k2", "s", "a"}, want: false},
			{seen: [3]string{"k1", "s2", "a"}, want: false},
		}},
		{"idle TTL expires a session, use renews it", Options{TTL: time.Minute}, []step{
			{record: [3]string{"n", "s", "a"}, seen: [3]string{"n", "s", "a"}, want: true},
			{advance: 50 * time.Second, seen: [3]string{"n", "s", "a"}, want: true},
			{advance: 50 * time.Second, seen: [3]string{"n", "s", "a"}, want: true},
			{advance: 61 * time.Second, seen: [3]string{"n", "s", "a"}, want: false},
		}},
		{"least recently used session is evicted beyond MaxSessions", Options{MaxSessions: 2}, []step{
			{record: [3]string{"n", "s1", "a"}},
			{record: [3]string{"n", "s2", "a"}},
			{seen: [3]string{"n", "s1", "a"}, want: true}, // s1 used: s2 is now least recent
			{record: [3]string{"n", "s3", "a"}, seen: [3]string{"n", "s2", "a"}, want: false},
			{seen: [3]string{"n", "s1", "a"}, want: true},
			{seen: [3]string{"n", "s3", "a"}, want: true},
		}},
		{"oldest keys are forgotten beyond MaxKeys", Options{MaxKeys: 2}, []step{
			{record: [3]string{"n", "s", "a"}},
			{record: [3]string{"n", "s", "b"}},
			{record: [3]string{"n", "s", "c"}, seen: [3]string{"n", "s", "a"}, want: false},
			{seen: [3]string{"n", "s", "b"}, want: true},
			{seen: [3]string{"n", "s", "c"}, want: true},
		}},
		{"an oversized key is never stored", Options{}, []step{
			{record: [3]string{"n", "s", strings.Repeat("x", MaxKeyBytes+1)}, seen: [3]string{"n", "s", strings.Repeat("x", MaxKeyBytes+1)}, want: false},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &clock{t: time.Unix(1_700_000_000, 0)}
			tc.opts.Now = c.now
			s := New(tc.opts)
			for i, st := range tc.steps {
				c.add(st.advance)
				if st.record[2] != "" {
					s.Record(st.record[0], st.record[1], []string{st.record[2]})
				}
				if st.seen[2] == "" {
					continue
				}
				if got := s.Seen(st.seen[0], st.seen[1], []string{st.seen[2]})[0]; got != st.want {
					t.Fatalf("step %d: Seen(%q,%q,%.10q) = %v, want %v", i, st.seen[0], st.seen[1], st.seen[2], got, st.want)
				}
			}
		})
	}
}

// TestStoreBounded: however many sessions and keys are recorded, the
// store holds at most MaxSessions sessions of at most MaxKeys keys.
func TestStoreBounded(t *testing.T) {
	s := New(Options{MaxSessions: 50, MaxKeys: 10})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				s.Record(fmt.Sprint("ns", w), fmt.Sprint("s", i%120), []string{fmt.Sprint(i), fmt.Sprint(i, "b")})
				s.Seen(fmt.Sprint("ns", w), fmt.Sprint("s", i%7), []string{"1"})
			}
		}()
	}
	wg.Wait()
	if n := s.Len(); n > 50 {
		t.Errorf("%d sessions held, want at most 50", n)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, el := range s.m {
		if e := el.Value.(*entry); len(e.keys) > 10 || len(e.order) != len(e.keys) {
			t.Fatalf("session holds %d keys (%d ordered), want at most 10", len(e.keys), len(e.order))
		}
	}
}
