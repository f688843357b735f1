package beir

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// direct talks to the engine over plain HTTP, as a user would without
// the sidecar.
type direct struct {
	base   string
	client *http.Client
}

// newDirect returns a client for base; gzip asks the engine for gzipped
// responses (Go's transport default), as an adapter without a
// compression switch does, else compression is off.
func newDirect(base string, gzip bool) *direct {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	t.DisableCompression = !gzip
	t.DialContext = (&net.Dialer{Timeout: 5 * time.Second}).DialContext
	return &direct{base: base, client: &http.Client{Transport: t}}
}

// do sends body (JSON, or raw bytes with ndjson) and decodes into out.
func (d *direct) do(ctx context.Context, method, path string, body any, out any) error {
	var rd io.Reader
	ct := "application/json"
	switch b := body.(type) {
	case nil:
	case []byte:
		rd, ct = bytes.NewReader(b), "application/x-ndjson"
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, d.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", ct)
	res, err := d.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: HTTP %d: %.300s", method, path, res.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

// searchIDs runs a direct search and returns the hit ids in order.
func (d *direct) searchIDs(ctx context.Context, index string, body any) ([]string, error) {
	var sr struct {
		Hits struct {
			Hits []struct {
				ID string `json:"_id"`
			} `json:"hits"`
		} `json:"hits"`
	}
	if err := d.do(ctx, http.MethodPost, "/"+index+"/_search", body, &sr); err != nil {
		return nil, err
	}
	ids := make([]string, len(sr.Hits.Hits))
	for i, h := range sr.Hits.Hits {
		ids[i] = h.ID
	}
	return ids, nil
}

// exists reports whether index exists.
func (d *direct) exists(ctx context.Context, index string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, d.base+"/"+index, nil)
	if err != nil {
		return false
	}
	res, err := d.client.Do(req)
	if err != nil {
		return false
	}
	res.Body.Close()
	return res.StatusCode == 200
}
