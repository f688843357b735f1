package statestore

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"
)

// budget is what one request may still spend waiting on the store.
type budget struct {
	spent  atomic.Int64 // nanoseconds waited on store calls
	failed atomic.Bool  // a call of this request failed: skip the store
}

type budgetKey struct{}

// WithBudget returns ctx carrying a fresh store budget: the calls made
// under it wait on the store for at most one timeout in all, and none is
// made once one of them failed, so a slow or dead store delays a request
// by at most one timeout.
func WithBudget(ctx context.Context) context.Context {
	return context.WithValue(ctx, budgetKey{}, &budget{})
}

func budgetFrom(ctx context.Context) *budget {
	b, _ := ctx.Value(budgetKey{}).(*budget)
	return b
}

func (b *budget) left(total time.Duration) time.Duration {
	return total - time.Duration(b.spent.Load())
}

func (b *budget) spend(d time.Duration) { b.spent.Add(int64(d)) }

// Middleware gives every request through next a store budget (WithBudget).
func Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(WithBudget(r.Context())))
	})
}
