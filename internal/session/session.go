// Package session is the bounded in-process store behind retrieve's
// sessionId (RCP/1 §7.7.3): per session, the keys of the hits it was
// served, so that later retrieves in the same trajectory can suppress
// them.
//
// Memory is bounded three ways: at most MaxSessions sessions (the least
// recently used is evicted first), at most MaxKeys keys per session (the
// oldest are forgotten first) and an idle TTL after which a session is
// gone. Sessions are keyed by a namespace (the caller's API key and
// tenant, chosen by the caller of this package) and the client's session
// id, so one caller can neither read nor poison another's session, even
// with the same session id. Keys longer than MaxKeyBytes are never stored.
package session

import (
	"container/list"
	"sync"
	"time"
)

// Defaults applied by New to zero options.
const (
	DefaultTTL         = 30 * time.Minute
	DefaultMaxSessions = 1000
	DefaultMaxKeys     = 500
	// MaxKeyBytes bounds one stored key (a hit or document id).
	MaxKeyBytes = 512
)

// Options bound a Store.
type Options struct {
	// TTL is how long a session lives after its last use.
	TTL time.Duration
	// MaxSessions caps the sessions kept; MaxKeys the keys per session.
	MaxSessions, MaxKeys int
	// Now replaces time.Now in tests.
	Now func() time.Time
}

type sessionKey struct{ ns, id string }

type entry struct {
	k       sessionKey
	keys    map[string]struct{}
	order   []string // insertion order, for forgetting the oldest
	expires time.Time
}

// Store is safe for concurrent use.
type Store struct {
	opts Options
	mu   sync.Mutex
	lru  *list.List // front: most recently used; values *entry
	m    map[sessionKey]*list.Element
}

// New returns an empty store.
func New(o Options) *Store {
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.MaxKeys <= 0 {
		o.MaxKeys = DefaultMaxKeys
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Store{opts: o, lru: list.New(), m: map[sessionKey]*list.Element{}}
}

// TTL is the idle lifetime of a session.
func (s *Store) TTL() time.Duration { return s.opts.TTL }

// Limits returns MaxSessions and MaxKeys.
func (s *Store) Limits() (sessions, keys int) { return s.opts.MaxSessions, s.opts.MaxKeys }

// get returns the live entry of k (expired ones are removed), touching it.
func (s *Store) get(k sessionKey, now time.Time) *entry {
	el, ok := s.m[k]
	if !ok {
		return nil
	}
	e := el.Value.(*entry)
	if !now.Before(e.expires) {
		s.lru.Remove(el)
		delete(s.m, k)
		return nil
	}
	e.expires = now.Add(s.opts.TTL)
	s.lru.MoveToFront(el)
	return e
}

// Seen reports, for each key, whether session id of namespace ns was
// already served it. An unknown or expired session has seen nothing.
func (s *Store) Seen(ns, id string, keys []string) []bool {
	out := make([]bool, len(keys))
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.get(sessionKey{ns, id}, now)
	if e == nil {
		return out
	}
	for i, k := range keys {
		_, out[i] = e.keys[k]
	}
	return out
}

// Record adds keys to session id of namespace ns, creating it (and
// evicting the least recently used session beyond MaxSessions).
func (s *Store) Record(ns, id string, keys []string) {
	if len(keys) == 0 {
		return
	}
	now := s.opts.Now()
	k := sessionKey{ns, id}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.get(k, now)
	if e == nil {
		e = &entry{k: k, keys: map[string]struct{}{}, expires: now.Add(s.opts.TTL)}
		s.m[k] = s.lru.PushFront(e)
		s.evict(now)
	}
	for _, key := range keys {
		if len(key) > MaxKeyBytes {
			continue
		}
		if _, dup := e.keys[key]; dup {
			continue
		}
		e.keys[key] = struct{}{}
		e.order = append(e.order, key)
	}
	if over := len(e.order) - s.opts.MaxKeys; over > 0 {
		for _, old := range e.order[:over] {
			delete(e.keys, old)
		}
		e.order = append(e.order[:0:0], e.order[over:]...)
	}
}

// evict drops expired sessions from the back, then the least recently
// used ones beyond MaxSessions.
func (s *Store) evict(now time.Time) {
	for el := s.lru.Back(); el != nil; {
		e := el.Value.(*entry)
		prev := el.Prev()
		if now.Before(e.expires) && s.lru.Len() <= s.opts.MaxSessions {
			break
		}
		s.lru.Remove(el)
		delete(s.m, e.k)
		el = prev
	}
}

// Len is the number of sessions held (expired ones not yet evicted included).
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lru.Len()
}
