package session

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"time"
)

// Shared is a session store the replicas of a deployment share
// (internal/statestore's Store). set, index and members are opaque hashes;
// a call the store did not serve returns an error, at once or within the
// store's timeout.
type Shared interface {
	// Seen reports which members set holds and renews its idle ttl.
	Seen(ctx context.Context, set, index string, members []string, ttl time.Duration) ([]bool, error)
	// Add puts members into set, keeping its newest maxMembers, renews its
	// ttl, and bounds index to its maxSets most recently used sets.
	Add(ctx context.Context, set, index string, members []string, ttl time.Duration, maxMembers, maxSets int) error
}

// Tiered is the session store retrieve uses: the Shared store when one is
// configured, so that a session's suppression holds on every replica, and
// this replica's own Store when there is none or whenever the shared one
// does not answer. Every page is also recorded in the own Store, so that
// a fallback still suppresses what this replica served.
//
// The shared store never sees a caller, tenant, session id or hit id: a
// set is named by the SHA-256 of (scope, namespace, session id), each
// length-prefixed so that no two different triples name the same set, and
// a member is the first 16 bytes of the SHA-256 of its key.
type Tiered struct {
	local  *Store
	shared Shared
	scope  string
	index  string
}

// NewTiered returns a Tiered over local and shared (nil: local only).
// scope separates the session sets of different backends in the shared
// store.
func NewTiered(local *Store, shared Shared, scope string) *Tiered {
	return &Tiered{local: local, shared: shared, scope: scope, index: hashParts("rcp-sidecar session index", scope)}
}

// Local is the replica's own store.
func (t *Tiered) Local() *Store { return t.local }

// Seen reports, for each key, whether session id of namespace ns was
// already served it. fallback is true when a shared store is configured
// but did not answer, and the answer is this replica's alone.
func (t *Tiered) Seen(ctx context.Context, ns, id string, keys []string) (seen []bool, fallback bool) {
	if t.shared == nil {
		return t.local.Seen(ns, id, keys), false
	}
	members, at := memberHashes(keys)
	got, err := t.shared.Seen(ctx, t.SetName(ns, id), t.index, members, t.local.TTL())
	if err != nil || len(got) != len(members) {
		return t.local.Seen(ns, id, keys), true
	}
	seen = make([]bool, len(keys))
	for j, i := range at {
		seen[i] = got[j]
	}
	return seen, false
}

// Record adds keys to session id of namespace ns, here and in the shared
// store; fallback is true when the shared store did not take them.
func (t *Tiered) Record(ctx context.Context, ns, id string, keys []string) (fallback bool) {
	t.local.Record(ns, id, keys)
	if t.shared == nil || len(keys) == 0 {
		return false
	}
	members, _ := memberHashes(keys)
	if len(members) == 0 {
		return false
	}
	sessions, maxKeys := t.local.Limits()
	return t.shared.Add(ctx, t.SetName(ns, id), t.index, members, t.local.TTL(), maxKeys, sessions) != nil
}

// SetName is the shared store's name of session id of namespace ns.
func (t *Tiered) SetName(ns, id string) string {
	return hashParts("rcp-sidecar session", t.scope, ns, id)
}

// memberHashes hashes the keys a store may hold (at most MaxKeyBytes
// long); at maps each hash back to its key's index.
func memberHashes(keys []string) (members []string, at []int) {
	members, at = make([]string, 0, len(keys)), make([]int, 0, len(keys))
	for i, k := range keys {
		if len(k) > MaxKeyBytes {
			continue
		}
		sum := sha256.Sum256([]byte(k))
		members, at = append(members, hex.EncodeToString(sum[:16])), append(at, i)
	}
	return members, at
}

// hashParts is the hex SHA-256 of parts, each preceded by its length.
func hashParts(parts ...string) string {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}
