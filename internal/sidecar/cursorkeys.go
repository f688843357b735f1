package sidecar

import (
	"crypto/rand"
	"fmt"
	"log/slog"

	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
)

// cursorKeys are server.cursor_keys decoded, or one random key when none
// are configured (cursors then open only in this process). The engines
// and the access layer each derive their own keys from them.
func cursorKeys(cfg *config.Config) ([][]byte, error) {
	ks, err := cfg.Server.CursorKeyBytes()
	if err != nil {
		return nil, err
	}
	if len(ks) > 0 {
		return ks, nil
	}
	k := make([]byte, config.MinCursorKeyBytes)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("cursor key: %w", err)
	}
	return [][]byte{k}, nil
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
