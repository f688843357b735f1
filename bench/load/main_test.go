package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/integration/itest"
)

// TestLoadAgainstDemo builds rcp-sidecar, starts `serve --demo` over HTTP
// on a free port and runs a short load against it: the report must show
// the rcp row, its comparison with the bare handler, and no failed
// request (a request counts as ok only with HTTP 200 and a result).
func TestLoadAgainstDemo(t *testing.T) {
	base := startDemo(t)
	var out bytes.Buffer
	f := &benchFlags{url: base, conns: 2, dur: 500 * time.Millisecond, rounds: 1, k: 10}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := runBench(ctx, &out, f); err != nil {
		t.Fatalf("load: %v\n%s", err, out.String())
	}
	if !regexp.MustCompile(`(?m)^rcp\s+\d+`).MatchString(out.String()) || !bytes.Contains(out.Bytes(), []byte("% of the bare handler")) {
		t.Errorf("load output:\n%s", out.String())
	}
	if m := regexp.MustCompile(`(?m)^rcp\s+\S+\s+\S+\s+\S+\s+\d+\s+(\d+)$`).FindSubmatch(out.Bytes()); m == nil || string(m[1]) != "0" {
		t.Errorf("load reported errors:\n%s", out.String())
	}
}

// TestLoadRefusesAnUnreachableTarget: a target that does not answer
// initialize is an error, not a report of zeros.
func TestLoadRefusesAnUnreachableTarget(t *testing.T) {
	f := &benchFlags{url: "http://127.0.0.1:1/rcp", conns: 1, dur: time.Second, rounds: 1, k: 10}
	var out bytes.Buffer
	if err := runBench(context.Background(), &out, f); err == nil {
		t.Fatalf("load against a closed port succeeded:\n%s", out.String())
	}
}

// startDemo builds the shipped binary, runs `serve --demo --http
// 127.0.0.1:0` and returns the base URL printed in its banner.
func startDemo(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(itest.BuildSidecar(t, t.TempDir()), "serve", "--demo", "--http", "127.0.0.1:0", "--log-level", "warn")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() })
	re := regexp.MustCompile(`at (http://\S+/rcp) `)
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			go func() {
				for sc.Scan() {
				}
			}()
			return m[1]
		}
	}
	t.Fatal("serve --demo printed no URL")
	return ""
}
