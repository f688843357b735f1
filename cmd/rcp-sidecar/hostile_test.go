package main

// The hostile-client suite: each TestHostile* test plays one attack a
// client (often holding a valid key) can mount against `serve` over HTTP,
// and checks the guarantee that defeats it. They run the built binary on
// loopback and stop by themselves within seconds.

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Keys of the hostile suite's access section (passed through the
// environment, as an operator would).
const (
	readerKey = "reader-key-0123456789"
	adminKey  = "admin-key-0123456789"
)

// hostileAccess is an access section with a read-only key and an admin
// key, read from TEST_READER_KEY and TEST_ADMIN_KEY.
func hostileAccess(t *testing.T, extra string) string {
	t.Setenv("TEST_READER_KEY", readerKey)
	t.Setenv("TEST_ADMIN_KEY", adminKey)
	return "access:\n" + extra + "  keys:\n" +
		"    - {id: reader, env: TEST_READER_KEY}\n" +
		"    - {id: admin, env: TEST_ADMIN_KEY, admin: true}\n"
}

// memoryBackend writes a two-document corpus and returns a backends
// section serving it from the memory engine.
func memoryBackend(t *testing.T, settings string) string {
	corpus := filepath.Join(t.TempDir(), "corpus.jsonl")
	writeFile(t, corpus, `{"_id":"d0","title":"Comets","text":"comets grow tails near the sun"}`+"\n"+
		`{"_id":"d1","title":"Sun","text":"the sun is a star"}`+"\n")
	return "backends:\n  - {name: docs, engine: memory, settings: {corpus: " + corpus + settings + "}}\n"
}

// deadAddr returns a loopback address nothing listens on: a listener
// opened and closed again (an engine that is down).
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// wireAnswer is one JSON-RPC answer, read as a client would.
type wireAnswer struct {
	Result json.RawMessage
	Error  *struct {
		Code    int
		Message string
	}
}

func (a wireAnswer) code() int {
	if a.Error == nil {
		return 0
	}
	return a.Error.Code
}

// TestHostileAuthBeforeEverything: the access section is checked before
// anything else answers. Attack: while the engine was still down at
// start-up, an unauthenticated POST /rcp/retrieve got HTTP 200 with
// -32010 "backend not ready" (telling a stranger what runs behind the
// port) and an unauthenticated shutdown got {"result":{}}; and any key
// could call shutdown. Guarantee: before and after the engine is up, a
// request without a valid key is 401 with -32012 whatever its method,
// shutdown needs a key with admin (others get -32012, in a batch too),
// and /readyz stays open for probes.
func TestHostileAuthBeforeEverything(t *testing.T) {
	phases := []struct {
		name, backends string
		retrieveCode   int // what an authenticated retrieve gets
		readyz         int
	}{
		{"engine down at start-up", "backends:\n  - name: docs\n    engine: elasticsearch\n" +
			"    settings: {urls: [http://" + deadAddr(t) + "], index: docs}\n" +
			"    resilience: {timeout: 1s, retries: 0}\n", -32010, http.StatusServiceUnavailable},
		{"engine up", memoryBackend(t, ""), 0, http.StatusOK},
	}
	cases := []struct {
		name, key, path, body string
		status                int
		code                  func(retrieve int) int
		batch                 []int // member codes of a batch answer
	}{
		{"retrieve without a key", "", "/retrieve", `{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"sun","k":2}}`,
			http.StatusUnauthorized, func(int) int { return -32012 }, nil},
		{"shutdown without a key", "", "/shutdown", `{"jsonrpc":"2.0","id":1,"method":"shutdown"}`,
			http.StatusUnauthorized, func(int) int { return -32012 }, nil},
		{"initialize without a key", "", "/initialize", initFrame,
			http.StatusUnauthorized, func(int) int { return -32012 }, nil},
		{"retrieve with a reader key", readerKey, "/retrieve", `{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"sun","k":2}}`,
			http.StatusOK, func(r int) int { return r }, nil},
		{"shutdown with a reader key", readerKey, "/shutdown", `{"jsonrpc":"2.0","id":1,"method":"shutdown"}`,
			http.StatusOK, func(int) int { return -32012 }, nil},
		{"shutdown in a batch with a reader key", readerKey, "", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"shutdown"}]`,
			http.StatusOK, nil, []int{0, -32012}},
		{"shutdown with the admin key", adminKey, "/shutdown", `{"jsonrpc":"2.0","id":1,"method":"shutdown"}`,
			http.StatusOK, func(int) int { return 0 }, nil},
	}
	for _, ph := range phases {
		t.Run(ph.name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "c.yaml")
			writeFile(t, cfg, ph.backends+hostileAccess(t, ""))
			base := startServe(t, "--config", cfg)
			if st := getStatus(t, strings.TrimSuffix(base, "/rcp")+"/readyz"); st != ph.readyz {
				t.Errorf("/readyz without a key = %d, want %d", st, ph.readyz)
			}
			for _, tc := range cases {
				st, body := rpcPost(t, base+tc.path, tc.key, tc.body)
				if st != tc.status {
					t.Errorf("%s: HTTP %d %s, want %d", tc.name, st, body, tc.status)
					continue
				}
				if tc.batch != nil {
					var as []wireAnswer
					if err := json.Unmarshal(body, &as); err != nil || len(as) != len(tc.batch) {
						t.Errorf("%s: %s, want %d answers", tc.name, body, len(tc.batch))
						continue
					}
					for i, a := range as {
						if a.code() != tc.batch[i] {
							t.Errorf("%s: member %d answered %d, want %d (%s)", tc.name, i, a.code(), tc.batch[i], body)
						}
					}
					continue
				}
				var a wireAnswer
				if err := json.Unmarshal(body, &a); err != nil {
					t.Errorf("%s: %s is not JSON-RPC: %v", tc.name, body, err)
					continue
				}
				if want := tc.code(ph.retrieveCode); a.code() != want {
					t.Errorf("%s: code %d (%s), want %d", tc.name, a.code(), body, want)
				}
			}
		})
	}
}

// TestHostileSSEPartialIDs: a key with an id namespace streams a retrieve.
// Attack: progress frames leaked the namespaced ids the engine stores
// ("b/d0") while the final result carried the client's ids ("d0"), which
// exposes the namespace scheme and breaks clients that match partial hits
// against the final ones. Guarantee: every id in an SSE progress frame's
// partial.hits is an id of the final result.
func TestHostileSSEPartialIDs(t *testing.T) {
	corpus := filepath.Join(t.TempDir(), "corpus.jsonl")
	writeFile(t, corpus, `{"_id":"b/d0","title":"Comets","text":"comets grow tails near the sun"}`+"\n"+
		`{"_id":"b/d1","title":"Sun","text":"the sun is a star"}`+"\n")
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	t.Setenv("TEST_TENANT_KEY", readerKey)
	writeFile(t, cfg, "backends:\n  - {name: docs, engine: memory, settings: {corpus: "+corpus+"}}\n"+
		"access:\n  keys:\n    - {id: b, env: TEST_TENANT_KEY, id_prefix: \"b/\"}\n")
	base := startServe(t, "--config", cfg)
	req, _ := http.NewRequest(http.MethodPost, base+"/retrieve", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"retrieve","params":{"query":"sun","k":2,"mode":"sparse","_meta":{"progressToken":"p"}}}`))
	req.Header.Set("Authorization", "Bearer "+readerKey)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var partial, final []string
	for _, ev := range strings.Split(strings.TrimSpace(string(raw)), "\n\n") {
		var f struct {
			Method string
			Params struct {
				Partial struct{ Hits []struct{ ID string } }
			}
			Result struct{ Hits []struct{ ID string } }
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(ev, "data: ")), &f); err != nil {
			t.Fatalf("SSE event %q: %v", ev, err)
		}
		for _, h := range f.Params.Partial.Hits {
			partial = append(partial, h.ID)
		}
		for _, h := range f.Result.Hits {
			final = append(final, h.ID)
		}
	}
	if len(partial) == 0 || len(final) == 0 {
		t.Fatalf("want progress with partial hits and a final result, got:\n%s", raw)
	}
	for _, id := range partial {
		if !slices.Contains(final, id) {
			t.Errorf("partial hit id %q is not among the final ids %v", id, final)
		}
	}
}
