package deploy

import (
	"slices"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
)

const composeFile = "docker-compose.yml"

// composeServices returns the services of docker-compose.yml (merge keys
// resolved by the YAML decoder, as Compose does).
func composeServices(t *testing.T) map[string]any {
	t.Helper()
	docs := yamlDocs(t, composeFile)
	if len(docs) != 1 {
		t.Fatalf("%s: %d documents, want 1", composeFile, len(docs))
	}
	svcs := m(docs[0]["services"])
	if len(svcs) == 0 {
		t.Fatalf("%s: no services", composeFile)
	}
	return svcs
}

// isSidecar reports whether a service runs the image built from the
// repository's Dockerfile.
func isSidecar(svc map[string]any) bool {
	b := svc["build"]
	ctx := str(b)
	if bm := m(b); bm != nil {
		ctx = str(bm["context"])
	}
	return ctx == "." || ctx == "./"
}

// oneShotJobs are services others wait for with
// service_completed_successfully: they exit, so they have no health check.
func oneShotJobs(svcs map[string]any) map[string]bool {
	jobs := map[string]bool{}
	for _, v := range svcs {
		for dep, cond := range m(m(v)["depends_on"]) {
			if str(m(cond)["condition"]) == "service_completed_successfully" {
				jobs[dep] = true
			}
		}
	}
	return jobs
}

func TestComposeEveryServiceHasAHealthCheck(t *testing.T) {
	svcs := composeServices(t)
	jobs := oneShotJobs(svcs)
	for name, v := range svcs {
		svc := m(v)
		hc := m(svc["healthcheck"])
		switch {
		case jobs[name]:
			if r := str(svc["restart"]); r != "no" {
				t.Errorf("one-shot job %s: restart %q, want \"no\"", name, r)
			}
		case hc == nil || len(strs(hc["test"])) == 0 || hc["disable"] == true:
			t.Errorf("service %s has no health check", name)
		}
	}
}

func TestComposeDependenciesWaitForHealth(t *testing.T) {
	svcs := composeServices(t)
	jobs := oneShotJobs(svcs)
	for name, v := range svcs {
		for dep, c := range m(m(v)["depends_on"]) {
			want := "service_healthy"
			if jobs[dep] {
				want = "service_completed_successfully"
			}
			if _, ok := svcs[dep]; !ok {
				t.Errorf("%s depends on unknown service %s", name, dep)
			}
			if got := str(m(c)["condition"]); got != want {
				t.Errorf("%s depends on %s with condition %q, want %q", name, dep, got, want)
			}
		}
	}
}

func TestComposeSidecars(t *testing.T) {
	clearRCPEnv(t)
	svcs := composeServices(t)
	seen := 0
	for name, v := range svcs {
		svc := m(v)
		if !isSidecar(svc) {
			continue
		}
		seen++
		t.Run(name, func(t *testing.T) { checkSidecarService(t, svc) })
	}
	if seen == 0 {
		t.Fatal("no service builds the sidecar image from the Dockerfile")
	}
}

// checkSidecarService: non-root, read-only, health check on /readyz, a
// mounted configuration that the sidecar's own loader accepts, backends to
// serve, and the listen port published.
func checkSidecarService(t *testing.T, svc map[string]any) {
	if u := str(svc["user"]); u == "" || strings.HasPrefix(u, "0") || strings.HasPrefix(u, "root") {
		t.Errorf("user %q: the sidecar must run as a non-root uid", u)
	}
	if svc["read_only"] != true {
		t.Error("read_only is not true")
	}
	if test := strings.Join(strs(m(svc["healthcheck"])["test"]), " "); !strings.Contains(test, "/readyz") {
		t.Errorf("health check %q does not ask /readyz", test)
	}
	cfg := loadMountedConfig(t, svc)
	checkBackendFlag(t, strs(svc["command"]), cfg)
	_, port, _ := strings.Cut(cfg.Server.HTTP.Listen, ":")
	if !publishes(strs(svc["ports"]), port) {
		t.Errorf("listen %s: container port %s is not published (ports %v)", cfg.Server.HTTP.Listen, port, strs(svc["ports"]))
	}
	if !strings.HasPrefix(cfg.Server.HTTP.Listen, "0.0.0.0:") {
		t.Errorf("listen %s: a container must listen on all interfaces to be published", cfg.Server.HTTP.Listen)
	}
}

// checkBackendFlag: a --backend must name a configured backend; without
// one the sidecar federates every backend, so there must be some.
func checkBackendFlag(t *testing.T, args []string, cfg *config.Config) {
	t.Helper()
	i := slices.Index(args, "--backend")
	switch {
	case i < 0 && len(cfg.Backends) == 0:
		t.Error("no --backend and no backends to federate")
	case i >= 0 && i+1 >= len(args):
		t.Errorf("command %v: --backend without a name", args)
	case i >= 0:
		if _, ok := cfg.Backend(args[i+1]); !ok {
			t.Errorf("--backend %s is not in the configuration", args[i+1])
		}
	}
}

// loadMountedConfig finds the host file mounted at the --config path and
// loads it with the sidecar's own loader (strict keys, engine settings).
func loadMountedConfig(t *testing.T, svc map[string]any) *config.Config {
	t.Helper()
	args := strs(svc["command"])
	i := slices.Index(args, "--config")
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("command %v has no --config", args)
	}
	for _, vol := range strs(svc["volumes"]) {
		parts := strings.Split(vol, ":")
		if len(parts) >= 2 && parts[1] == args[i+1] {
			cfg, err := config.Load(repoRoot(t)+"/"+strings.TrimPrefix(parts[0], "./"), registry())
			if err != nil {
				t.Fatal(err)
			}
			return cfg
		}
	}
	t.Fatalf("no volume mounts %s", args[i+1])
	return nil
}

// publishes reports whether a "host:container" or "ip:host:container"
// mapping targets the container port.
func publishes(ports []string, port string) bool {
	for _, p := range ports {
		parts := strings.Split(p, ":")
		if parts[len(parts)-1] == port {
			return true
		}
	}
	return false
}
