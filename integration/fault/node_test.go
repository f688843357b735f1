package fault

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// instance names the dedicated node (integration/elasticsearch/start.sh).
const instance = "fault"

// node is a dedicated Elasticsearch node on a fixed loopback port, so a
// restart keeps its URL and data.
type node struct {
	t    *testing.T
	name string // RCP_ES_INSTANCE
	port int
	dir  string // integration/elasticsearch
	work string // integration/.work
}

// requireEngine skips loudly without RCP_ES_URL unless RCP_REQUIRE_ENGINES.
func requireEngine(t *testing.T) {
	t.Helper()
	if os.Getenv("RCP_ES_URL") != "" {
		return
	}
	if os.Getenv("RCP_REQUIRE_ENGINES") != "" {
		t.Fatal("RCP_ES_URL is unset but RCP_REQUIRE_ENGINES is set")
	}
	t.Skip("SKIPPED: RCP_ES_URL is unset; run integration/elasticsearch/start.sh and source integration/.work/elasticsearch.env (this test starts its own node from the same distribution)")
}

func startNode(t *testing.T) *node {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(file))
	n := &node{t: t, name: instance, port: freePort(t), dir: filepath.Join(root, "elasticsearch"), work: filepath.Join(root, ".work")}
	t.Cleanup(func() { n.script("stop.sh", false) })
	n.script("start.sh", false)
	return n
}

func (n *node) URL() string { return "http://127.0.0.1:" + strconv.Itoa(n.port) }

// script runs start.sh or stop.sh for the dedicated instance.
func (n *node) script(name string, reuse bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(n.dir, name))
	cmd.Env = append(os.Environ(), "RCP_ES_INSTANCE="+n.name, "RCP_ES_HTTP_PORT="+strconv.Itoa(n.port))
	if reuse {
		cmd.Env = append(cmd.Env, "RCP_ES_REUSE=1")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		n.t.Errorf("%s: %v\n%s", name, err, out)
	}
}

// kill sends SIGKILL to the node: no shutdown, sockets reset.
func (n *node) kill() {
	pid := n.pid()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		n.t.Fatalf("kill %d: %v", pid, err)
	}
	for syscall.Kill(pid, 0) == nil {
		time.Sleep(20 * time.Millisecond)
	}
}

// signal sends sig (SIGSTOP, SIGCONT) to the node.
func (n *node) signal(sig syscall.Signal) {
	if err := syscall.Kill(n.pid(), sig); err != nil {
		n.t.Fatalf("%v: %v", sig, err)
	}
}

// pid is the node's process id.
func (n *node) pid() int {
	dir, err := os.ReadFile(filepath.Join(n.work, "elasticsearch-"+n.name+".node"))
	if err != nil {
		n.t.Fatal(err)
	}
	pidText, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(dir)), "logs", "es.pid"))
	if err != nil {
		n.t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
	if err != nil {
		n.t.Fatal(err)
	}
	return pid
}

// restart starts the killed node again with its data; it returns once
// the cluster is yellow.
func (n *node) restart() { n.script("start.sh", true) }

// watchBack polls the node directly every 50ms and reports when index
// answers again: the moment the engine is back, independent of start.sh.
func (n *node) watchBack(index string) <-chan time.Time {
	back := make(chan time.Time, 1)
	go func() {
		for end := time.Now().Add(3 * time.Minute); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			req, _ := newJSONRequest(context.Background(), "GET", n.URL()+"/"+index+"/_count", "")
			if resp, err := httpClient.Do(req); err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					back <- time.Now()
					return
				}
			}
		}
		back <- time.Now()
	}()
	return back
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// esDo calls the node directly (setup and final checks).
func esDo(t *testing.T, base, method, path, body string) []byte {
	t.Helper()
	req, err := newJSONRequest(context.Background(), method, base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b := readAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	return b
}

func seedIndex(t *testing.T, base, index string, docs int) {
	esDo(t, base, "PUT", "/"+index, `{"settings":{"number_of_replicas":0},"mappings":{"properties":{"title":{"type":"text"},"text":{"type":"text"},"topic":{"type":"keyword"}}}}`)
	var b strings.Builder
	topics := []string{"comets", "rockets", "oceans", "forests"}
	for i := range docs {
		tp := topics[i%len(topics)]
		fmt.Fprintf(&b, `{"index":{"_id":"s-%d"}}`+"\n"+`{"title":"%s %d","text":"a note about %s number %d","topic":"%s"}`+"\n", i, tp, i, tp, i, tp)
	}
	esDo(t, base, "POST", "/"+index+"/_bulk?refresh=true", b.String())
}
