package sidecar

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/signal"
	"reflect"
	"syscall"

	"github.com/rcp-sidecar/rcp-sidecar/internal/access"
	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
)

// reloader re-reads the configuration file on SIGHUP and swaps the access
// policy — keys, JWT settings, per-key scopes and rates, concurrency
// limits — into the running guard atomically (access.Guard.Reload).
// Listeners and connections stay as they are: a request admitted before
// the swap finishes under the policy that admitted it. A file that does
// not load, validate or compile on every served engine is refused and
// logged, and the running policy stays. Changes outside access (backends,
// server, telemetry, access.tls) are logged as needing a restart.
type reloader struct {
	path          string
	guard         *access.Guard
	defaultEngine string
	log           *slog.Logger
	running       *config.Config
}

// watchReload reloads on every SIGHUP until ctx ends; the returned stop
// releases the signal. Without a configuration file or a guard there is
// nothing to reload, and SIGHUP keeps its default.
func watchReload(ctx context.Context, r *reloader) (stop func()) {
	if r.path == "" || r.guard == nil {
		return func() {}
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-hup:
				_ = r.reload()
			case <-ctx.Done():
				return
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		cancel()
		<-done
	}
}

// reload loads the file and swaps the access policy, or logs why not.
func (r *reloader) reload() error {
	r.log.Info("reload: re-reading the configuration", "file", r.path)
	cfg, err := validTelemetry(config.Load(r.path, Registry()))
	if err == nil {
		var o access.Options
		if o, err = guardOptions(cfg.Access, cfg, r.defaultEngine, r.log); err == nil {
			err = r.guard.Reload(o)
		}
	}
	if err != nil {
		r.log.Error("reload refused; the running configuration stays", "file", r.path, "err", err)
		return err
	}
	r.warnRestart(cfg)
	r.running = cfg
	r.log.Info("reload: access policy replaced", "keys", len(cfg.Access.Keys), "jwt", cfg.Access.JWT != nil,
		"max_inflight", cfg.Access.MaxInflight, "max_inflight_per_key", cfg.Access.MaxInflightPerKey)
	return nil
}

// warnRestart names the sections that changed but only take effect on a
// restart.
func (r *reloader) warnRestart(cfg *config.Config) {
	if r.running == nil {
		return
	}
	sections := map[string][2]any{
		"server":     {r.running.Server, cfg.Server},
		"backends":   {r.running.Backends, cfg.Backends},
		"embedder":   {r.running.Embedder, cfg.Embedder},
		"telemetry":  {r.running.Telemetry, cfg.Telemetry},
		"access.tls": {r.running.Access.TLS, cfg.Access.TLS},
	}
	for name, v := range sections {
		if !sameJSON(v[0], v[1]) {
			r.log.Warn("reload: changes to this section take effect on restart", "section", name)
		}
	}
}

func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && reflect.DeepEqual(ja, jb)
}
