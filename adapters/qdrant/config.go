package qdrant

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
)

// ModelBM25 is Qdrant's server-side BM25 model for Document inputs
// (Qdrant ≥ 1.15.2), the only sparse inference the adapter advertises.
const ModelBM25 = "qdrant/bm25"

// Config is the `settings` block of a qdrant backend.
type Config struct {
	// Address is the gRPC endpoint host:port (default port 6334). Required.
	Address string `json:"address" mapstructure:"address"`
	// Collection is the target collection or alias. Required.
	Collection string `json:"collection" mapstructure:"collection"`

	// Vector names the dense vector to search; "" is the collection's
	// unnamed (default) vector. Dense retrieval is advertised only when it
	// exists and the embedder has its size.
	Vector string `json:"vector,omitempty" mapstructure:"vector"`
	// SparseVector names the sparse vector for sparse retrieval and
	// SparseModel how query text becomes that vector. Only ModelBM25 is
	// supported (server-side inference, IDF modifier required); leaving
	// either empty disables sparse retrieval.
	SparseVector string `json:"sparse_vector,omitempty" mapstructure:"sparse_vector"`
	SparseModel  string `json:"sparse_model,omitempty" mapstructure:"sparse_model"`

	// TextField is the payload key holding the document text (default
	// "text"); TitleField and URIField feed Hit.citation.
	TextField  string `json:"text_field,omitempty" mapstructure:"text_field"`
	TitleField string `json:"title_field,omitempty" mapstructure:"title_field"`
	URIField   string `json:"uri_field,omitempty" mapstructure:"uri_field"`
	// MetaFields limits Hit.meta to these payload keys; empty returns the
	// whole payload. The text (when wanted), title, URI and original-id
	// keys are fetched regardless, as they feed the hit itself.
	MetaFields []string `json:"meta_fields,omitempty" mapstructure:"meta_fields"`

	// Writable opts in to index/add and index/delete.
	Writable bool `json:"writable,omitempty" mapstructure:"writable"`

	// APIKey is sent as the `api-key` metadata on every call.
	APIKey adapters.Secret `json:"api_key,omitempty" mapstructure:"api_key"`
	// TLS enables transport security; CAFile is a PEM bundle to trust
	// (default: the system pool) and ServerName overrides the name checked
	// against the server certificate.
	TLS        bool   `json:"tls,omitempty" mapstructure:"tls"`
	CAFile     string `json:"ca_file,omitempty" mapstructure:"ca_file"`
	ServerName string `json:"server_name,omitempty" mapstructure:"server_name"`

	// Timeout is sent as the server-side timeout of each query (default
	// 30s; the request context still bounds the call).
	Timeout time.Duration `json:"timeout,omitempty" mapstructure:"timeout"`
}

// DefaultConfig returns a Config with defaults applied.
func DefaultConfig() *Config {
	return &Config{TextField: "text", Timeout: 30 * time.Second}
}

// Validate implements adapters.Config.
func (c *Config) Validate() error {
	if c.Address == "" {
		return errors.New("qdrant: address is required")
	}
	if _, _, err := c.hostPort(); err != nil {
		return err
	}
	if c.Collection == "" {
		return errors.New("qdrant: collection is required")
	}
	if c.SparseModel != "" && c.SparseModel != ModelBM25 {
		return fmt.Errorf("qdrant: sparse_model %q is not supported (only %q)", c.SparseModel, ModelBM25)
	}
	if (c.SparseModel == "") != (c.SparseVector == "") {
		return errors.New("qdrant: sparse_vector and sparse_model are set together")
	}
	if !c.TLS && (c.CAFile != "" || c.ServerName != "") {
		return errors.New("qdrant: ca_file and server_name need tls: true")
	}
	if c.Timeout < 0 {
		return errors.New("qdrant: timeout must not be negative")
	}
	for _, f := range c.MetaFields {
		if strings.TrimSpace(f) == "" {
			return errors.New("qdrant: meta_fields: empty field name")
		}
	}
	return nil
}

// hostPort splits Address; a missing port is 6334.
func (c *Config) hostPort() (string, int, error) {
	host, ps, err := net.SplitHostPort(c.Address)
	if err != nil {
		return c.Address, 6334, nil
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port <= 0 || port > 65535 {
		return "", 0, fmt.Errorf("qdrant: address %q has an invalid port", c.Address)
	}
	if host == "" {
		return "", 0, fmt.Errorf("qdrant: address %q has no host", c.Address)
	}
	return host, port, nil
}

func (c *Config) textField() string {
	if c.TextField == "" {
		return "text"
	}
	return c.TextField
}

// Endpoint implements adapters.Described: db.system.name "qdrant" (not
// among the OpenTelemetry conventions' names, so the product's lower-case
// name, as they ask of other systems), the configured node and
// collection, and the Points service methods the adapter calls.
func (c *Config) Endpoint() adapters.Endpoint {
	host, port, err := c.hostPort()
	if err != nil {
		host, port = c.Address, 0
	}
	return adapters.Endpoint{System: "qdrant", URL: c.Address, Address: host, Port: port, Collection: c.Collection,
		Operations: adapters.Operations{Search: "Query", Upsert: "Upsert", Delete: "Delete"}}
}
