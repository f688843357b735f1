package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// TestReadmeStdioSession pastes the README's stdio example into bash, with
// `go run ./cmd/rcp-sidecar` standing for the binary built by TestMain,
// and checks that both messages are answered with results and that the
// retrieve finds the comet passage, as the README shows.
func TestReadmeStdioSession(t *testing.T) {
	var snippet string
	for _, block := range strings.Split(docsText(t), "```sh\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		if strings.Contains(block, "serve --stdio --demo") && strings.Contains(block, `"method":"initialize"`) {
			snippet = block
			break
		}
	}
	if snippet == "" {
		t.Fatal("README and docs have no stdio session example (a sh block piping initialize into serve --stdio --demo)")
	}
	cmd := exec.Command("bash", "-c", strings.ReplaceAll(snippet, "go run ./cmd/rcp-sidecar", binary))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the README's stdio example failed: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 answers, got:\n%s", out)
	}
	type answer struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	var res []answer
	for _, l := range lines {
		var r answer
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.Error != nil || r.Result == nil {
			t.Fatalf("answer is not a result: %s (%v)", l, err)
		}
		res = append(res, r)
	}
	var hits struct {
		Hits []struct{ ID string } `json:"hits"`
	}
	if err := json.Unmarshal(res[1].Result, &hits); err != nil || len(hits.Hits) == 0 || hits.Hits[0].ID != "d029" {
		t.Errorf("retrieve did not find the comet passage first: %s", res[1].Result)
	}
}
