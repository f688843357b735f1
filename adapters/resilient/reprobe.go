package resilient

import (
	"context"
	"log/slog"
	"reflect"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

const slogDebug = slog.LevelDebug

// maxReprobeBackoff caps Run's backoff at this multiple of the interval.
const maxReprobeBackoff = 8

// Run re-probes the engine every ReprobeInterval until ctx is done,
// backing off (×2 per consecutive failure, up to 8×) while it fails. A
// success closes the breaker sooner than waiting for traffic. Evidence
// that differs from the first successful probe is logged as a warning and
// nothing else: the capability set of an open session never changes
// (§13.2); a restart renegotiates. The caller owns the goroutine.
func (r *Adapter) Run(ctx context.Context) {
	fails := 0
	for {
		if !sleep(ctx, r.opts.ReprobeInterval<<min(fails, 3)) {
			return
		}
		if _, err := r.Probe(ctx); err != nil {
			fails++
			r.log.Debug("re-probe failed", "backend", r.opts.Name, "code", r.ErrorCode(err).String(), // Probe logged why
				"breaker", r.State(), "next_in", r.opts.ReprobeInterval<<min(fails, 3))
			continue
		}
		fails = 0
	}
}

// observe records the first successful probe as the baseline and warns,
// once per distinct change, when a later probe proves something else.
func (r *Adapter) observe(ev *capability.Evidence) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.baseline == nil:
		r.baseline = ev
	case sameEvidence(r.baseline, ev):
		r.drifted = nil
	case r.drifted == nil || !sameEvidence(r.drifted, ev):
		r.drifted = ev
		r.log.Warn("engine evidence changed since start-up; the capability set is unchanged for open sessions (§13.2): restart to renegotiate",
			"backend", r.opts.Name, "engine", ev.Engine, "version", ev.Version, "target", ev.Target)
	}
}

// sameEvidence compares two probes, ignoring facts that change with
// normal use (the document count, the fields documents added).
func sameEvidence(a, b *capability.Evidence) bool {
	x, y := *a, *b
	x.DocCount, y.DocCount = 0, 0
	x.MappedFields, y.MappedFields = nil, nil
	return reflect.DeepEqual(x, y)
}

func attrs(name, op string, attempt int, wait time.Duration, code rcp.Code) []slog.Attr {
	return []slog.Attr{slog.String("backend", name), slog.String("op", op), slog.Int("attempt", attempt),
		slog.Duration("wait", wait), slog.String("code", code.String())}
}
