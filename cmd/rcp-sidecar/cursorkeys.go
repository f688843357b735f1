package main

import (
	"fmt"
	"log/slog"

	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
	"github.com/rcp-sidecar/rcp-sidecar/rankmath"
)

// Labels of the keys derived from server.cursor_keys: the engines'
// cursors and the access layer's per-key wrapping never share a key.
const (
	engineCursorLabel = "rcp-sidecar engine cursor"
	accessCursorLabel = "rcp-sidecar access cursor"
)

// cursorKeys are server.cursor_keys decoded, or one random key when none
// are configured (cursors then open only in this process).
func cursorKeys(cfg *config.Config) (rankmath.CursorKeys, error) {
	ks, err := cfg.Server.CursorKeyBytes()
	if err != nil {
		return nil, err
	}
	if len(ks) > 0 {
		return rankmath.CursorKeys(ks), nil
	}
	rk, err := rankmath.RandomCursorKeys()
	if err != nil {
		return nil, fmt.Errorf("cursor key: %w", err)
	}
	return rk, nil
}

// logCursorKeys says once, at start, whether cursors reach other
// replicas and survive a restart.
func logCursorKeys(cfg *config.Config, log *slog.Logger) {
	if n := len(cfg.Server.CursorKeys); n > 0 {
		log.Info("cursor keys from server.cursor_keys: cursors open on every replica with the same keys", "keys", n)
		return
	}
	log.Info("no server.cursor_keys: cursors and indexVersion tokens are sealed with a random key of this process; " +
		"they will not survive a restart or open on another replica")
}
