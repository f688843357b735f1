package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strings"
)

// Access is the inbound access-control section (§5.2, §15): API keys with
// their scopes, a global concurrency limit and optional TLS/mTLS. With no
// keys every HTTP caller has full access (bind to loopback then, §15.1).
type Access struct {
	Keys []AccessKey `mapstructure:"keys" json:"keys,omitempty"`
	// MaxInflight caps concurrent RCP requests; excess is shed with HTTP
	// 429 and -32011 instead of queueing (§15.5). 0 means no limit.
	MaxInflight int `mapstructure:"max_inflight" json:"max_inflight"`
	// MaxInflightPerKey caps one key's concurrent RCP requests the same
	// way, so that one key cannot take every slot. 0 means no per-key cap.
	MaxInflightPerKey int `mapstructure:"max_inflight_per_key" json:"max_inflight_per_key,omitempty"`
	TLS               TLS `mapstructure:"tls" json:"tls"`
	// JWT accepts OIDC/JWT bearer tokens alongside the keys; absent: none.
	JWT *JWT `mapstructure:"jwt" json:"jwt,omitempty"`
	// AllowedHosts are the host names, besides the loopback ones, that a
	// sidecar without keys or tokens answers on a loopback address (the
	// name a reverse proxy on the same machine forwards). Bare names or IP
	// addresses: no port, scheme or wildcard.
	AllowedHosts []string `mapstructure:"allowed_hosts" json:"allowed_hosts,omitempty"`
}

// AccessKey is one API key and what it may do. Exactly one of Hash, File
// and Env supplies the secret; the key itself never appears in the file.
type AccessKey struct {
	// ID names the key in logs and scopes its cursors; it is not secret.
	ID string `mapstructure:"id" json:"id"`
	// Hash is "sha256:<64 hex digits>" of the key.
	Hash Secret `mapstructure:"hash" json:"hash,omitempty"`
	// File holds the key in plain text (surrounding whitespace ignored).
	File string `mapstructure:"file" json:"file,omitempty"`
	// Env names an environment variable holding the key.
	Env string `mapstructure:"env" json:"env,omitempty"`
	// Engines the key may address; empty means all.
	Engines []string `mapstructure:"engines" json:"engines,omitempty"`
	// Write allows index/add and index/delete.
	Write bool `mapstructure:"write" json:"write"`
	// Admin allows the lifecycle method shutdown over HTTP; other keys
	// get -32012 for it. Without keys every caller may call it.
	Admin bool `mapstructure:"admin" json:"admin,omitempty"`
	// Filter is an RCP filter (§8) ANDed into every retrieve and enforced
	// on every document this key writes (tenant isolation in a shared
	// index).
	Filter map[string]any `mapstructure:"filter" json:"filter,omitempty"`
	// IDPrefix namespaces the ids this key writes and deletes; required
	// for a writable key with a filter on a backend whose tenants share an
	// index, so tenants cannot touch each other's ids.
	IDPrefix string `mapstructure:"id_prefix" json:"id_prefix,omitempty"`
	// Tenant is the key's tenant value: on a backend with tenancy mode
	// index it selects the key's own index (and is required there for a
	// key with a filter); it scopes nothing on a shared backend.
	Tenant string `mapstructure:"tenant" json:"tenant,omitempty"`
	Rate   Rate   `mapstructure:"rate" json:"rate"`
}

// Rate is a token bucket: RPS tokens per second, at most Burst banked.
// RPS 0 means unlimited; Burst 0 means max(1, ceil(RPS)).
type Rate struct {
	RPS   float64 `mapstructure:"rps" json:"rps"`
	Burst int     `mapstructure:"burst" json:"burst"`
}

// TLS enables HTTPS; ClientCAFile additionally requires client
// certificates signed by that CA (mTLS).
type TLS struct {
	CertFile     string `mapstructure:"cert_file" json:"cert_file,omitempty"`
	KeyFile      string `mapstructure:"key_file" json:"key_file,omitempty"`
	ClientCAFile string `mapstructure:"client_ca_file" json:"client_ca_file,omitempty"`
}

// Enabled reports whether TLS is configured.
func (t TLS) Enabled() bool { return t.CertFile != "" }

// Digest returns the SHA-256 of the key, resolving File or Env. Errors
// never contain the key.
func (k *AccessKey) Digest() ([32]byte, error) {
	var d [32]byte
	switch {
	case k.Hash != "":
		return parseHash(k.Hash.Reveal())
	case k.File != "":
		b, err := os.ReadFile(k.File)
		if err != nil {
			return d, fmt.Errorf("read key file: %w", err)
		}
		return digestOf(string(b))
	case k.Env != "":
		return digestOf(os.Getenv(k.Env))
	}
	return d, errors.New("one of hash, file or env is required")
}

func digestOf(key string) ([32]byte, error) {
	key = strings.TrimSpace(key)
	if len(key) < 16 {
		return [32]byte{}, errors.New("the key is empty or shorter than 16 characters")
	}
	return sha256.Sum256([]byte(key)), nil
}

func parseHash(h string) ([32]byte, error) {
	var d [32]byte
	hexPart, ok := strings.CutPrefix(h, "sha256:")
	b, err := hex.DecodeString(hexPart)
	if !ok || err != nil || len(b) != len(d) {
		return d, errors.New(`hash must be "sha256:" followed by 64 hex digits`)
	}
	copy(d[:], b)
	return d, nil
}

// FilterJSON returns the key's filter as JSON, nil when it has none.
func (k *AccessKey) FilterJSON() (json.RawMessage, error) {
	if len(k.Filter) == 0 {
		return nil, nil
	}
	return json.Marshal(k.Filter)
}

// validate checks the section against the configured backend names.
func (a *Access) validate(backends []string) error {
	switch {
	case a.MaxInflight < 0:
		return errors.New("access.max_inflight: must not be negative")
	case a.MaxInflightPerKey < 0:
		return errors.New("access.max_inflight_per_key: must not be negative")
	case (a.TLS.CertFile == "") != (a.TLS.KeyFile == ""):
		return errors.New("access.tls: cert_file and key_file go together")
	case a.TLS.ClientCAFile != "" && !a.TLS.Enabled():
		return errors.New("access.tls.client_ca_file: needs cert_file and key_file")
	}
	for i, h := range a.AllowedHosts {
		if !validHostName(h) {
			return fmt.Errorf("access.allowed_hosts[%d]: %q is not a host name or IP address (no port, scheme or wildcard)", i, h)
		}
	}
	seen := map[string]bool{}
	for i := range a.Keys {
		path := fmt.Sprintf("access.keys[%d]", i)
		if err := a.Keys[i].validate(path, backends, seen); err != nil {
			return err
		}
	}
	if err := validatePrefixes(a.Keys); err != nil {
		return err
	}
	if a.JWT != nil {
		return a.JWT.validate(a.Keys)
	}
	return nil
}

func (k *AccessKey) validate(path string, backends []string, seen map[string]bool) error {
	if k.ID == "" || seen[k.ID] {
		return fmt.Errorf("%s.id: required and unique (got %q)", path, k.ID)
	}
	seen[k.ID] = true
	if n := countSet(k.Hash != "", k.File != "", k.Env != ""); n != 1 {
		return fmt.Errorf("%s: exactly one of hash, file or env is required", path)
	}
	if _, err := k.Digest(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, e := range k.Engines {
		if !slices.Contains(backends, e) {
			return fmt.Errorf("%s.engines: unknown backend %q", path, e)
		}
	}
	if k.Rate.RPS < 0 || k.Rate.Burst < 0 {
		return fmt.Errorf("%s.rate: rps and burst must not be negative", path)
	}
	if _, err := k.FilterJSON(); err != nil {
		return fmt.Errorf("%s.filter: %w", path, err)
	}
	return nil
}

// hostName is a DNS name: dot-separated labels of letters, digits and
// inner hyphens, an optional final dot.
var hostName = regexp.MustCompile(`^(?i)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$`)

// validHostName reports whether h is a bare host name or IP address, as
// it may appear in a Host header without its port.
func validHostName(h string) bool {
	if ip := strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"); strings.Contains(ip, ":") {
		a, err := netip.ParseAddr(ip)
		return err == nil && a.Zone() == ""
	}
	return len(h) <= 253 && hostName.MatchString(h)
}

func countSet(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// validatePrefixes rejects an id_prefix that is a proper prefix of
// another's ("t1" and "t10"), or equal to another with a different filter:
// either would let one tenant address the other's ids.
func validatePrefixes(keys []AccessKey) error {
	for i := range keys {
		for j := range keys {
			a, b := &keys[i], &keys[j]
			if i == j || a.IDPrefix == "" || b.IDPrefix == "" || !strings.HasPrefix(b.IDPrefix, a.IDPrefix) {
				continue
			}
			fa, _ := a.FilterJSON()
			fb, _ := b.FilterJSON()
			if a.IDPrefix != b.IDPrefix || string(fa) != string(fb) {
				return fmt.Errorf("access.keys[%d].id_prefix: %q overlaps access.keys[%d].id_prefix %q", i, a.IDPrefix, j, b.IDPrefix)
			}
		}
	}
	return nil
}
