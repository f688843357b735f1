package config

import (
	"bytes"
	"encoding/json"
)

// The MarshalJSON methods print durations as Go duration strings ("10s")
// instead of nanoseconds, so `config check` output reads like the file.

// MarshalJSON implements json.Marshaler.
func (s Server) MarshalJSON() ([]byte, error) {
	type plain Server
	return marshal(struct {
		plain
		Deadline string `json:"deadline"`
	}{plain(s), s.Deadline.String()})
}

// MarshalJSON implements json.Marshaler.
func (h HTTP) MarshalJSON() ([]byte, error) {
	type plain HTTP
	return marshal(struct {
		plain
		SessionTTL        string `json:"session_ttl"`
		ReadHeaderTimeout string `json:"read_header_timeout"`
		BodyTimeout       string `json:"body_timeout"`
		WriteTimeout      string `json:"write_timeout"`
		IdleTimeout       string `json:"idle_timeout"`
	}{plain(h), h.SessionTTL.String(), h.ReadHeaderTimeout.String(), h.BodyTimeout.String(),
		h.WriteTimeout.String(), h.IdleTimeout.String()})
}

// MarshalJSON implements json.Marshaler.
func (e Embedder) MarshalJSON() ([]byte, error) {
	type plain Embedder
	return marshal(struct {
		plain
		Timeout string `json:"timeout"`
	}{plain(e), e.Timeout.String()})
}

// marshal is json.Marshal without HTML escaping, so "<secret>" stays legible.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
