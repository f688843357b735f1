// Command rcp-healthcheck exits 0 when an HTTP GET of its URL argument
// (default http://127.0.0.1:8080/readyz) answers 200 within the timeout,
// and 1 otherwise. The container image has no shell, curl or wget, so
// Docker HEALTHCHECK, Compose health checks and Kubernetes exec probes
// of a sidecar bound to loopback run this instead.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// defaultURL is the readiness endpoint of a sidecar listening on the
// image's default port.
const defaultURL = "http://127.0.0.1:8080/readyz"

func main() {
	timeout := flag.Duration("timeout", 3*time.Second, "give up after this long")
	flag.Parse()
	url := defaultURL
	if flag.NArg() > 0 {
		url = flag.Arg(0)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	err := check(ctx, url)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "rcp-healthcheck:", err)
		os.Exit(1)
	}
}

// check GETs url and reports an error unless the status is 200.
func check(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}
