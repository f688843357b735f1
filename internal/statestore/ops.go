package statestore

import (
	"context"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// Seen reports, for each member, whether set holds it, and renews the
// set's TTL. set, index and members are opaque (hashed by the caller).
func (s *Store) Seen(ctx context.Context, set, index string, members []string, ttl time.Duration) ([]bool, error) {
	out := make([]bool, len(members))
	if len(members) == 0 {
		return out, nil
	}
	key, idx := s.prefix+"s:"+set, s.prefix+"si:"+index
	var scores *redis.FloatSliceCmd
	err := s.do(ctx, OpSessionSeen, func(ctx context.Context) error {
		cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			scores = p.ZMScore(ctx, key, members...)
			p.PExpire(ctx, key, ttl)
			p.ZAddXX(ctx, idx, redis.Z{Score: float64(time.Now().UnixMilli()), Member: set})
			return nil
		})
		return firstErr(cmds, err)
	})
	if err != nil {
		return nil, err
	}
	for i, v := range scores.Val() {
		if i < len(out) {
			out[i] = v != 0
		}
	}
	return out, nil
}

// Add puts members into set (the oldest beyond maxMembers are dropped),
// renews its idle ttl and its place in index, and deletes the least
// recently used sets of index beyond maxSets (0: no bound).
func (s *Store) Add(ctx context.Context, set, index string, members []string, ttl time.Duration, maxMembers, maxSets int) error {
	if len(members) == 0 {
		return nil
	}
	key, idx := s.prefix+"s:"+set, s.prefix+"si:"+index
	return s.do(ctx, OpSessionRecord, func(ctx context.Context) error {
		now := time.Now().UnixMilli()
		first := s.order(len(members))
		zs := make([]redis.Z, len(members))
		for i, m := range members {
			zs[i] = redis.Z{Score: float64(first + int64(i)), Member: m}
		}
		var card *redis.IntCmd
		cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.ZAddNX(ctx, key, zs...)
			if maxMembers > 0 {
				p.ZRemRangeByRank(ctx, key, 0, int64(-maxMembers-1))
			}
			p.PExpire(ctx, key, ttl)
			p.ZAdd(ctx, idx, redis.Z{Score: float64(now), Member: set})
			p.ZRemRangeByScore(ctx, idx, "-inf", "("+strconv.FormatInt(now-ttl.Milliseconds(), 10))
			p.PExpire(ctx, idx, ttl)
			card = p.ZCard(ctx, idx)
			return nil
		})
		if err := firstErr(cmds, err); err != nil {
			return err
		}
		over := card.Val() - int64(maxSets)
		if maxSets <= 0 || over <= 0 {
			return nil
		}
		old, err := s.rdb.ZPopMin(ctx, idx, over).Result()
		if err != nil {
			return err
		}
		cmds, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, z := range old {
				if m, ok := z.Member.(string); ok && !strings.ContainsAny(m, " \r\n") {
					p.Del(ctx, s.prefix+"s:"+m) // one key per DEL: a cluster routes each
				}
			}
			return nil
		})
		return firstErr(cmds, err)
	})
}

// Allow takes one request from key's limit — rps requests a second, burst
// at once (GCRA, on the server's clock, so replicas agree) — or reports
// how long until one is available. key is opaque (a hash of the caller).
func (s *Store) Allow(ctx context.Context, key string, rps float64, burst int) (wait time.Duration, ok bool, err error) {
	if rps <= 0 {
		return 0, true, nil
	}
	if burst <= 0 {
		burst = int(max(1, math.Ceil(rps)))
	}
	lim := redis_rate.Limit{Rate: 1, Burst: burst, Period: max(time.Microsecond, time.Duration(float64(time.Second)/rps))}
	var res *redis_rate.Result
	err = s.do(ctx, OpRateLimit, func(ctx context.Context) error {
		var err error
		res, err = s.lim.Allow(ctx, s.prefix+"rl:"+key, lim)
		return err
	})
	if err != nil {
		return 0, false, err
	}
	if res.Allowed > 0 {
		return 0, true, nil
	}
	return max(res.RetryAfter, time.Millisecond), false, nil
}

// order reserves n insertion scores: microseconds since the epoch,
// strictly increasing in this process (replicas agree to their clocks'
// skew), and below 2^53, so exact in a sorted-set score.
func (s *Store) order(n int) int64 {
	for {
		last := s.seq.Load()
		first := max(last+1, time.Now().UnixMicro())
		if s.seq.CompareAndSwap(last, first+int64(n)-1) {
			return first
		}
	}
}

// firstErr is the pipeline's error, or the first command's.
func firstErr(cmds []redis.Cmder, err error) error {
	if err != nil && err != redis.Nil {
		return err
	}
	for _, c := range cmds {
		if e := c.Err(); e != nil && e != redis.Nil {
			return e
		}
	}
	return nil
}
