package config

import (
	"encoding/base64"
	"os"
	"reflect"
	"strings"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
)

// Secrets returns every credential the configuration holds or points to,
// for redaction (§15.6): each Secret value anywhere in it — the embedder's
// api_key, every backend's passwords, API keys and bearer tokens (each
// engine's own settings type included), the access keys' hashes — the
// access keys and cursor keys themselves when read from a file or the
// environment, and
// the HTTP Basic form (base64 of "username:password") of a settings block
// with both. Empty values are left out.
func (c *Config) Secrets() []string {
	var out []string
	collectSecrets(reflect.ValueOf(c), &out)
	for i := range c.Access.Keys {
		if k := c.Access.Keys[i].plain(); k != "" {
			out = append(out, k)
		}
	}
	for i := range c.Server.CursorKeys {
		if k, err := c.Server.CursorKeys[i].text(); err == nil && k != "" {
			out = append(out, k)
		}
	}
	return out
}

var secretType = reflect.TypeFor[adapters.Secret]()

// collectSecrets walks v (structs, pointers, interfaces, slices, maps)
// and appends every non-empty adapters.Secret it finds.
func collectSecrets(v reflect.Value, out *[]string) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			collectSecrets(v.Elem(), out)
		}
	case reflect.String:
		if v.Type() == secretType && v.String() != "" {
			*out = append(*out, v.String())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				collectSecrets(v.Field(i), out)
			}
		}
		if basic := basicAuth(v); basic != "" {
			*out = append(*out, basic)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			collectSecrets(v.Index(i), out)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			collectSecrets(it.Value(), out)
		}
	}
}

// basicAuth is the Authorization: Basic credential of a struct with a
// Username string and a Password Secret, "" otherwise.
func basicAuth(v reflect.Value) string {
	u, p := v.FieldByName("Username"), v.FieldByName("Password")
	if !u.IsValid() || !p.IsValid() || u.Kind() != reflect.String || p.Type() != secretType || p.String() == "" {
		return ""
	}
	return base64.StdEncoding.EncodeToString([]byte(u.String() + ":" + p.String()))
}

// plain is the key itself when it is read from a file or the environment
// ("" for a hash, or when it cannot be read).
func (k *AccessKey) plain() string {
	switch {
	case k.File != "":
		b, err := os.ReadFile(k.File)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	case k.Env != "":
		return strings.TrimSpace(os.Getenv(k.Env))
	}
	return ""
}
