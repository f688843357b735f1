package config

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// CursorKey is one key of server.cursor_keys, the keys that seal
// pagination cursors and pinned indexVersion tokens. Exactly one of
// Value, Env and File supplies it. A key is written as hex of at least
// 32 bytes (64 hex digits: `openssl rand -hex 32`), or as "base64:"
// followed by standard or URL-safe base64 of at least 32 bytes
// (`openssl rand -base64 32`); surrounding whitespace is ignored.
type CursorKey struct {
	// Value is the key itself (use ${VAR} to keep it out of the file).
	Value Secret `mapstructure:"value" json:"value,omitempty"`
	// Env names an environment variable holding the key.
	Env string `mapstructure:"env" json:"env,omitempty"`
	// File holds the key (a mounted secret).
	File string `mapstructure:"file" json:"file,omitempty"`
}

// MinCursorKeyBytes is the shortest cursor key accepted.
const MinCursorKeyBytes = 32

// MaxCursorKeys bounds server.cursor_keys: a cursor is tried against
// each key in turn.
const MaxCursorKeys = 8

// CursorKeyBytes returns the decoded server.cursor_keys in order (the
// first seals, every one opens); nil when none are configured. Errors
// name the key by its position and never contain key material.
func (s *Server) CursorKeyBytes() ([][]byte, error) {
	if len(s.CursorKeys) > MaxCursorKeys {
		return nil, fmt.Errorf("server.cursor_keys: at most %d keys (got %d)", MaxCursorKeys, len(s.CursorKeys))
	}
	var out [][]byte
	for i := range s.CursorKeys {
		b, err := s.CursorKeys[i].bytes()
		if err != nil {
			return nil, fmt.Errorf("server.cursor_keys[%d]: %w", i, err)
		}
		out = append(out, b)
	}
	return out, nil
}

// text is the key as written, read from Env or File when set.
func (k *CursorKey) text() (string, error) {
	switch n := countSet(k.Value != "", k.Env != "", k.File != ""); {
	case n != 1:
		return "", errors.New("exactly one of value, env or file is required")
	case k.Env != "":
		v, ok := os.LookupEnv(k.Env)
		if !ok || strings.TrimSpace(v) == "" {
			return "", fmt.Errorf("environment variable %s is not set", k.Env)
		}
		return strings.TrimSpace(v), nil
	case k.File != "":
		b, err := os.ReadFile(k.File)
		if err != nil {
			return "", fmt.Errorf("read key file: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	return strings.TrimSpace(k.Value.Reveal()), nil
}

func (k *CursorKey) bytes() ([]byte, error) {
	t, err := k.text()
	if err != nil {
		return nil, err
	}
	var b []byte
	if enc, ok := strings.CutPrefix(t, "base64:"); ok {
		if b, err = decodeBase64(enc); err != nil {
			return nil, errors.New(`the key after "base64:" is not valid base64`)
		}
		if len(b) < MinCursorKeyBytes {
			return nil, fmt.Errorf("the key is %d bytes; at least %d are required (openssl rand -base64 32)", len(b), MinCursorKeyBytes)
		}
		return b, nil
	}
	if b, err = hex.DecodeString(t); err != nil {
		return nil, errors.New(`the key is neither hex nor "base64:" followed by base64 (openssl rand -hex 32)`)
	}
	if len(b) < MinCursorKeyBytes {
		return nil, fmt.Errorf("the key is %d hex digits; at least %d are required (openssl rand -hex 32)", len(t), 2*MinCursorKeyBytes)
	}
	return b, nil
}

// decodeBase64 accepts standard and URL-safe base64, padded or not.
func decodeBase64(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("not base64")
}
