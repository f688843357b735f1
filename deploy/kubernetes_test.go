package deploy

import (
	"net/url"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
)

const k8sFile = "deploy/kubernetes/rcp-sidecar.yaml"

// k8sObjects indexes the example's objects by kind.
func k8sObjects(t *testing.T) map[string][]map[string]any {
	t.Helper()
	out := map[string][]map[string]any{}
	for _, d := range yamlDocs(t, k8sFile) {
		out[str(d["kind"])] = append(out[str(d["kind"])], d)
	}
	return out
}

// sidecarContainer finds the container running the sidecar image among
// the pod's init (native sidecar) and regular containers.
func sidecarContainer(t *testing.T, pod map[string]any) map[string]any {
	t.Helper()
	for _, list := range []string{"initContainers", "containers"} {
		for _, c := range s(pod[list]) {
			if strings.HasPrefix(str(m(c)["image"]), "rcp-sidecar") {
				return m(c)
			}
		}
	}
	t.Fatal("no container runs the rcp-sidecar image")
	return nil
}

func podSpec(t *testing.T, objs map[string][]map[string]any) map[string]any {
	t.Helper()
	deps := objs["Deployment"]
	if len(deps) != 1 {
		t.Fatalf("%d Deployments, want 1", len(deps))
	}
	pod := m(m(m(deps[0]["spec"])["template"])["spec"])
	if n := len(s(pod["containers"])); n == 0 {
		t.Fatal("the pod has no application container")
	}
	return pod
}

func TestKubernetesProbes(t *testing.T) {
	c := sidecarContainer(t, podSpec(t, k8sObjects(t)))
	tests := []struct{ probe, path string }{
		{"startupProbe", "/readyz"},
		{"readinessProbe", "/readyz"},
		{"livenessProbe", "/healthz"},
	}
	for _, tc := range tests {
		t.Run(tc.probe, func(t *testing.T) {
			cmd := strs(m(m(c[tc.probe])["exec"])["command"])
			if len(cmd) != 2 || !strings.HasSuffix(cmd[0], "/rcp-healthcheck") {
				t.Fatalf("%s: exec %v, want [.../rcp-healthcheck URL]", tc.probe, cmd)
			}
			u, err := url.Parse(cmd[1])
			if err != nil || u.Path != tc.path || u.Hostname() != "127.0.0.1" {
				t.Errorf("%s asks %q, want http://127.0.0.1:<port>%s", tc.probe, cmd[1], tc.path)
			}
		})
	}
}

func TestKubernetesSecurityAndResources(t *testing.T) {
	c := sidecarContainer(t, podSpec(t, k8sObjects(t)))
	sc := m(c["securityContext"])
	checks := []struct {
		name string
		ok   bool
	}{
		{"runAsNonRoot", sc["runAsNonRoot"] == true},
		{"runAsUser 65532", sc["runAsUser"] == nonRootUID},
		{"readOnlyRootFilesystem", sc["readOnlyRootFilesystem"] == true},
		{"allowPrivilegeEscalation false", sc["allowPrivilegeEscalation"] == false},
		{"capabilities drop ALL", strings.Join(strs(m(sc["capabilities"])["drop"]), ",") == "ALL"},
		{"requests cpu and memory", m(m(c["resources"])["requests"])["cpu"] != nil && m(m(c["resources"])["requests"])["memory"] != nil},
		{"limits memory", m(m(c["resources"])["limits"])["memory"] != nil},
	}
	for _, ck := range checks {
		if !ck.ok {
			t.Errorf("sidecar container: %s does not hold", ck.name)
		}
	}
}

// TestKubernetesConfig loads the ConfigMap's configuration with the
// container's environment (Secret values stubbed) through the sidecar's own
// loader, and checks it listens on the loopback port the probes ask.
func TestKubernetesConfig(t *testing.T) {
	clearRCPEnv(t)
	objs := k8sObjects(t)
	pod := podSpec(t, objs)
	c := sidecarContainer(t, pod)
	for _, e := range s(c["env"]) {
		setContainerEnv(t, m(e), objs["Secret"])
	}
	data := configMapConfig(t, objs, pod, c)
	cfg, err := config.Parse([]byte(data), registry())
	if err != nil {
		t.Fatalf("ConfigMap config.yaml: %v", err)
	}
	probe := strs(m(m(c["readinessProbe"])["exec"])["command"])
	if len(probe) != 2 || !strings.Contains(probe[1], "//"+cfg.Server.HTTP.Listen+"/") {
		t.Errorf("listen %s is not where the probes ask (%v)", cfg.Server.HTTP.Listen, probe)
	}
	if !strings.HasPrefix(cfg.Server.HTTP.Listen, "127.0.0.1:") {
		t.Errorf("listen %s: the sidecar must stay on the pod's loopback", cfg.Server.HTTP.Listen)
	}
}

// setContainerEnv sets one env entry; a secretKeyRef must name a key of a
// Secret in the example and is stubbed with a placeholder value.
func setContainerEnv(t *testing.T, e map[string]any, secrets []map[string]any) {
	t.Helper()
	name := str(e["name"])
	if m(m(e["valueFrom"])["resourceFieldRef"]) != nil {
		return // a value of the pod's own resources (GOMEMLIMIT), not the sidecar's configuration
	}
	ref := m(m(e["valueFrom"])["secretKeyRef"])
	if ref == nil {
		t.Setenv(name, str(e["value"]))
		return
	}
	for _, sec := range secrets {
		if v := m(sec["stringData"])[str(ref["key"])]; str(m(sec["metadata"])["name"]) == str(ref["name"]) && v != nil {
			t.Setenv(name, str(v)) // as rendered: the configuration validates some (server.cursor_keys)
			return
		}
	}
	t.Errorf("env %s refers to secret %s key %s, not defined in the example", name, ref["name"], ref["key"])
}

// configMapConfig returns the config file the container's --config names,
// following its volumeMount to the pod volume and the ConfigMap behind it.
func configMapConfig(t *testing.T, objs map[string][]map[string]any, pod, c map[string]any) string {
	t.Helper()
	args := strs(c["args"])
	if len(args) != 2 || args[0] != "--config" {
		t.Fatalf("args %v, want [--config PATH]", args)
	}
	dir, file := args[1][:strings.LastIndex(args[1], "/")], args[1][strings.LastIndex(args[1], "/")+1:]
	vol := ""
	for _, vm := range s(c["volumeMounts"]) {
		if str(m(vm)["mountPath"]) == dir {
			vol = str(m(vm)["name"])
		}
	}
	cmName := ""
	for _, v := range s(pod["volumes"]) {
		if str(m(v)["name"]) == vol {
			cmName = str(m(m(v)["configMap"])["name"])
		}
	}
	for _, cm := range objs["ConfigMap"] {
		if str(m(cm["metadata"])["name"]) == cmName && cmName != "" {
			if data := str(m(cm["data"])[file]); data != "" {
				return data
			}
		}
	}
	t.Fatalf("--config %s: no ConfigMap key behind mount %q (volume %q)", args[1], dir, vol)
	return ""
}
