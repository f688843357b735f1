package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/integration/itest"
)

// engine describes one engine's cluster scripts and variables.
type engine struct {
	name               string // the backend's engine: elasticsearch or opensearch
	urlsVar, nodesVar  string // written by start-cluster.sh
	instanceVar, reuse string // start.sh's instance and restart variables
	pidFile            string // the node's pid file under its logs/
	pit                bool   // the adapter pages under a point in time with pit: true
}

var (
	elasticsearch = engine{name: "elasticsearch", urlsVar: "RCP_ES_CLUSTER_URLS", nodesVar: "RCP_ES_CLUSTER_NODES",
		instanceVar: "RCP_ES_INSTANCE", reuse: "RCP_ES_REUSE", pidFile: "es.pid", pit: true}
	opensearch = engine{name: "opensearch", urlsVar: "RCP_OS_CLUSTER_URLS", nodesVar: "RCP_OS_CLUSTER_NODES",
		instanceVar: "RCP_OS_INSTANCE", reuse: "RCP_OS_REUSE", pidFile: "opensearch.pid"}
)

// cluster is a running 3-node cluster of one engine.
type cluster struct {
	t     *testing.T
	e     engine
	urls  []string // node HTTP URLs
	insts []string // start.sh instance names, in the order of urls
	names []string // node names, in the order of urls
	root  string   // the repository root
}

// requireCluster returns the cluster named by the engine's variables,
// skips loudly without them, or fails under RCP_REQUIRE_CLUSTER.
func requireCluster(t *testing.T, e engine) *cluster {
	t.Helper()
	urls, nodes := os.Getenv(e.urlsVar), os.Getenv(e.nodesVar)
	if urls == "" || nodes == "" {
		how := fmt.Sprintf("%s and %s are unset: run integration/%s/start-cluster.sh and source integration/.work/%s-cluster.vars",
			e.urlsVar, e.nodesVar, e.name, e.name)
		if os.Getenv("RCP_REQUIRE_CLUSTER") != "" {
			t.Fatalf("%s, but RCP_REQUIRE_CLUSTER is set", how)
		}
		t.Skip("SKIPPING: " + how)
	}
	c := &cluster{t: t, e: e, urls: strings.Split(urls, ","), insts: strings.Split(nodes, ","), root: itest.RepoRoot(t)}
	if len(c.urls) != 3 || len(c.insts) != 3 {
		t.Fatalf("%s=%q and %s=%q: want 3 nodes each", e.urlsVar, urls, e.nodesVar, nodes)
	}
	for _, u := range c.urls {
		var local struct {
			Nodes map[string]struct{ Name string }
		}
		c.getJSON(u, "/_nodes/_local?filter_path=nodes.*.name", &local)
		for _, n := range local.Nodes {
			c.names = append(c.names, n.Name)
		}
	}
	if len(c.names) != 3 {
		t.Fatalf("node names %v: want one per URL", c.names)
	}
	c.health("green", "")
	return c
}

var hc = &http.Client{Timeout: 60 * time.Second}

// do calls a node directly; it returns the status and body.
func do(method, url string, body any) (int, []byte, error) {
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			return 0, nil, err
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		return 0, nil, err
	}
	ct := "application/json"
	if strings.Contains(url, "/_bulk") {
		ct = "application/x-ndjson"
	}
	req.Header.Set("Content-Type", ct)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

// must calls the first live node and fails the test on any non-2xx.
func (c *cluster) must(method, path string, body any) []byte {
	c.t.Helper()
	var last string
	for _, u := range c.urls {
		status, raw, err := do(method, u+path, body)
		if err != nil {
			last = err.Error()
			continue // a stopped node
		}
		if status >= 300 {
			c.t.Fatalf("%s %s: %d %s", method, path, status, raw)
		}
		return raw
	}
	c.t.Fatalf("%s %s: no node answered (%s)", method, path, last)
	return nil
}

func (c *cluster) getJSON(base, path string, out any) {
	c.t.Helper()
	status, raw, err := do(http.MethodGet, base+path, nil)
	if err != nil || status != 200 {
		c.t.Fatalf("GET %s%s: %d %v %s", base, path, status, err, raw)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		c.t.Fatalf("GET %s: %v", path, err)
	}
}

// health waits, bounded, until index (the cluster when "") is at least
// status; it returns the status the engine reported.
func (c *cluster) health(status, index string) string {
	c.t.Helper()
	var h struct {
		Status   string
		TimedOut bool `json:"timed_out"`
	}
	path := "/_cluster/health"
	if index != "" {
		path += "/" + index
	}
	_ = json.Unmarshal(c.must(http.MethodGet, path+"?wait_for_status="+status+"&timeout=180s", nil), &h)
	if h.TimedOut {
		c.t.Fatalf("%s is %s after 180s, want %s", cmpOr(index, "the cluster"), h.Status, status)
	}
	return h.Status
}

// indexHealth is index's status now (red, yellow or green).
func (c *cluster) indexHealth(index string) string {
	var h struct{ Status string }
	_ = json.Unmarshal(c.must(http.MethodGet, "/_cluster/health/"+index, nil), &h)
	return h.Status
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// createIndex creates index with the given primaries and replicas, BM25
// title and text; a node that leaves does not get its copies reallocated
// for 10 minutes, so the index stays yellow (or red) while it is away.
func (c *cluster) createIndex(index string, primaries, replicas int) {
	c.t.Helper()
	_, _, _ = do(http.MethodDelete, c.urls[0]+"/"+index+"?ignore_unavailable=true", nil)
	c.must(http.MethodPut, "/"+index, map[string]any{
		"settings": map[string]any{"number_of_shards": primaries, "number_of_replicas": replicas,
			"unassigned.node_left.delayed_timeout": "10m"},
		"mappings": map[string]any{"properties": map[string]any{
			"title": map[string]any{"type": "text"}, "text": map[string]any{"type": "text"}}},
	})
	c.t.Cleanup(func() { _, _, _ = do(http.MethodDelete, c.urls[0]+"/"+index, nil) })
	c.health("green", index)
}

// shard is one copy of a shard.
type shard struct {
	Shard, Prirep, State, Node string
}

// shards lists index's shard copies.
func (c *cluster) shards(index string) []shard {
	c.t.Helper()
	var out []shard
	if err := json.Unmarshal(c.must(http.MethodGet, "/_cat/shards/"+index+"?format=json&h=shard,prirep,state,node", nil), &out); err != nil {
		c.t.Fatal(err)
	}
	return out
}

// victim picks the node to kill: the one holding the most primaries of
// index that is not the elected master (a data node, as a rolling
// upgrade takes them), and returns its position in urls.
func (c *cluster) victim(index string) int {
	c.t.Helper()
	var master []struct{ Node string }
	_ = json.Unmarshal(c.must(http.MethodGet, "/_cat/master?format=json", nil), &master)
	best, most := -1, -1
	for i, name := range c.names {
		if len(master) == 1 && master[0].Node == name {
			continue
		}
		n := 0
		for _, s := range c.shards(index) {
			if s.Node == name && s.Prirep == "p" {
				n++
			}
		}
		if n > most {
			best, most = i, n
		}
	}
	if most < 1 {
		c.t.Fatalf("no node but the master holds a primary of %s: %+v", index, c.shards(index))
	}
	return best
}

// pid is node i's process id, read from the files start.sh keeps.
func (c *cluster) pid(i int) int {
	c.t.Helper()
	dir, err := os.ReadFile(filepath.Join(c.root, "integration", ".work", c.e.name+"-"+c.insts[i]+".node"))
	if err != nil {
		c.t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(dir)), "logs", c.e.pidFile))
	if err != nil {
		c.t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		c.t.Fatal(err)
	}
	return pid
}

// kill sends SIGKILL to node i and waits until it is gone.
func (c *cluster) kill(i int) {
	c.t.Helper()
	pid := c.pid(i)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		c.t.Fatalf("kill %d: %v", pid, err)
	}
	for syscall.Kill(pid, 0) == nil {
		time.Sleep(20 * time.Millisecond)
	}
}

// restart starts killed node i again with its data and port.
func (c *cluster) restart(i int) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(c.root, "integration", c.e.name, "start.sh"))
	cmd.Env = append(os.Environ(), c.e.instanceVar+"="+c.insts[i], c.e.reuse+"=1", "RCP_OS_WAIT_S=600")
	if out, err := cmd.CombinedOutput(); err != nil {
		c.t.Fatalf("restart %s: %v\n%s", c.insts[i], err, out)
	}
}

// awaitLeft waits until the surviving nodes see node i gone and name is
// no longer holding a started copy of index.
func (c *cluster) awaitLeft(i int) {
	c.t.Helper()
	end := time.Now().Add(3 * time.Minute)
	for time.Now().Before(end) {
		var nodes []struct{ Name string }
		status, raw, err := do(http.MethodGet, c.urls[(i+1)%3]+"/_cat/nodes?format=json&h=name", nil)
		if err == nil && status == 200 && json.Unmarshal(raw, &nodes) == nil && len(nodes) == 2 &&
			!slices.ContainsFunc(nodes, func(n struct{ Name string }) bool { return n.Name == c.names[i] }) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	c.t.Fatalf("the cluster still lists %s 3 minutes after its kill", c.names[i])
}

// countIDs returns which of ids index holds, read from the engine.
func (c *cluster) countIDs(index string, ids []string) int {
	c.t.Helper()
	c.must(http.MethodPost, "/"+index+"/_refresh", nil)
	found := 0
	for chunk := range slices.Chunk(ids, 500) {
		var r struct {
			Docs []struct{ Found bool }
		}
		if err := json.Unmarshal(c.must(http.MethodPost, "/"+index+"/_mget?_source=false", map[string]any{"ids": chunk}), &r); err != nil {
			c.t.Fatal(err)
		}
		for _, d := range r.Docs {
			if d.Found {
				found++
			}
		}
	}
	return found
}
