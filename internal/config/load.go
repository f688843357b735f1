package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
)

// EnvPrefix prefixes environment overrides: RCP_SERVER_HTTP_LISTEN
// overrides server.http.listen, RCP_EMBEDDER_API_KEY embedder.api_key.
const EnvPrefix = "RCP"

// Load reads the YAML file at path; see Parse.
func Load(path string, reg *adapters.Registry) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	cfg, err := Parse(data, reg)
	var located *Error
	if errors.As(err, &located) {
		located.File = path
		return nil, fmt.Errorf("config %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// Parse decodes YAML in two phases: the top-level structs strictly (unknown
// keys name their path), then each backend's settings strictly into the
// Config of the engine found in reg, followed by Validate. An error about
// a key or token of the file is an *Error naming its line and column.
func Parse(data []byte, reg *adapters.Registry) (*Config, error) {
	cfg, err := parse(data, reg)
	if err != nil {
		return nil, locate(data, err)
	}
	return cfg, nil
}

func parse(data []byte, reg *adapters.Registry) (*Config, error) {
	raw, err := readRaw(data)
	if err != nil {
		return nil, err
	}
	if err := expandTree("", raw); err != nil {
		return nil, err
	}
	if err := checkKeys("", raw, reflect.TypeFor[Config]()); err != nil {
		return nil, err
	}
	cfg, err := decodeTop(raw)
	if err != nil {
		return nil, err
	}
	if err := decodeBackends(cfg, reg); err != nil {
		return nil, err
	}
	return cfg, cfg.Validate()
}

// FromEnv returns the defaults with RCP_* overrides applied and the server
// and embedder sections validated; it has no backends. `serve --demo`
// uses it when no file is given.
func FromEnv() (*Config, error) {
	cfg, err := decodeTop(map[string]any{})
	if err != nil {
		return nil, err
	}
	if err := cfg.Server.validate(); err != nil {
		return nil, err
	}
	if cfg.Embedder != nil {
		return cfg, cfg.Embedder.validate()
	}
	return cfg, nil
}

func readRaw(data []byte) (map[string]any, error) {
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		return nil, syntaxError(data, err)
	}
	return v.AllSettings(), nil
}

func decodeTop(raw map[string]any) (*Config, error) {
	v := viper.New()
	if err := v.MergeConfigMap(raw); err != nil {
		return nil, err
	}
	embedderSet := bindEnv(v)
	cfg := Default()
	emb := DefaultEmbedder()
	cfg.Embedder = &emb
	if err := v.UnmarshalExact(cfg); err != nil {
		return nil, decodeError("", err)
	}
	if !embedderSet() {
		cfg.Embedder = nil
	}
	applyJWTDefaults(cfg.Access.JWT)
	return cfg, nil
}

// bindEnv binds RCP_* variables to every scalar key under server and
// embedder, and reports whether any embedder key ended up set.
func bindEnv(v *viper.Viper) func() bool {
	var embKeys []string
	for _, k := range leafKeys("", reflect.TypeFor[Config]()) {
		_ = v.BindEnv(k, EnvPrefix+"_"+strings.ToUpper(strings.ReplaceAll(k, ".", "_")))
		if strings.HasPrefix(k, "embedder.") {
			embKeys = append(embKeys, k)
		}
	}
	return func() bool {
		for _, k := range embKeys {
			if v.IsSet(k) {
				return true
			}
		}
		return false
	}
}

// leafKeys lists dotted keys of non-struct fields reachable through
// structs (not slices or maps).
func leafKeys(prefix string, t reflect.Type) []string {
	t = deref(t)
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		name := tagName(f)
		if name == "-" || !f.IsExported() {
			continue
		}
		ft := deref(f.Type)
		if ft.Kind() == reflect.Struct && ft.PkgPath() == t.PkgPath() {
			keys = append(keys, leafKeys(prefix+name+".", ft)...)
		} else if ft.Kind() != reflect.Slice || ft.Elem().Kind() == reflect.String {
			keys = append(keys, prefix+name)
		}
	}
	return keys
}

func decodeBackends(cfg *Config, reg *adapters.Registry) error {
	for i := range cfg.Backends {
		b := &cfg.Backends[i]
		applyPolicyDefaults(&b.Policy)
		applyTenancyDefaults(&b.Tenancy)
		if err := decodeSettings(fmt.Sprintf("backends[%d]", i), b, reg); err != nil {
			return err
		}
	}
	return nil
}

func applyPolicyDefaults(p *Policy) {
	d := DefaultPolicy()
	if p.MaxK == 0 {
		p.MaxK = d.MaxK
	}
	if p.DefaultCandidateK == 0 {
		p.DefaultCandidateK = min(d.DefaultCandidateK, p.MaxK)
	}
	if p.MaxQueryChars == 0 {
		p.MaxQueryChars = d.MaxQueryChars
	}
}

// decodeSettings is phase two (docs/ARCHITECTURE.md §2.4): the engine owns its
// Config type; unknown keys are errors here too.
func decodeSettings(path string, b *Backend, reg *adapters.Registry) error {
	if reg == nil {
		return fmt.Errorf("%s.engine: no engine registry", path)
	}
	f, ok := reg.Lookup(b.Engine)
	if !ok {
		return fmt.Errorf("%s.engine: unknown engine %q (known: %s)", path, b.Engine, strings.Join(reg.Names(), ", "))
	}
	c := f.NewConfig()
	if err := checkKeys(path+".settings.", b.Settings, reflect.TypeOf(c)); err != nil {
		return err
	}
	v := viper.New()
	if err := v.MergeConfigMap(b.Settings); err != nil {
		return fmt.Errorf("%s.settings: %w", path, err)
	}
	if err := v.UnmarshalExact(c); err != nil {
		return decodeError(path+".settings.", err)
	}
	if err := c.Validate(); err != nil {
		return fmt.Errorf("%s.settings (%s): %w", path, b.Name, err)
	}
	b.Config = c
	return b.Tenancy.validate(path+".tenancy", f)
}

// decodeError names the key a value could not be decoded for (the first,
// when there are several), with prefix before the decoder's field name.
func decodeError(prefix string, err error) error {
	var de *mapstructure.DecodeError
	if !errors.As(err, &de) {
		return fmt.Errorf("%sdecode: %w", prefix, err)
	}
	path := prefix + de.Name()
	return &pathError{path: path, err: fmt.Errorf("%s: %w", path, de.Unwrap())}
}

var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expandTree replaces ${VAR} and ${VAR:-default} in every string value.
// An unset variable without a default is an error naming the key.
func expandTree(path string, node any) error {
	switch n := node.(type) {
	case map[string]any:
		for k, v := range n {
			s, err := expandValue(join(path, k), v)
			if err != nil {
				return err
			}
			n[k] = s
		}
	case []any:
		for i, v := range n {
			s, err := expandValue(fmt.Sprintf("%s[%d]", path, i), v)
			if err != nil {
				return err
			}
			n[i] = s
		}
	}
	return nil
}

func expandValue(path string, v any) (any, error) {
	s, ok := v.(string)
	if !ok {
		return v, expandTree(path, v)
	}
	var missing string
	out := varRef.ReplaceAllStringFunc(s, func(m string) string {
		sub := varRef.FindStringSubmatch(m)
		if val, ok := os.LookupEnv(sub[1]); ok && val != "" {
			return val
		}
		if sub[2] != "" {
			return sub[3]
		}
		missing = sub[1]
		return ""
	})
	if missing != "" {
		return nil, fmt.Errorf("%s: environment variable %s is not set", path, missing)
	}
	return out, nil
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}
