package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/rcp-sidecar/rcp-sidecar/internal/config"
)

// chartDir is the Helm chart, relative to the repository root.
const chartDir = "deploy/helm/rcp-sidecar"

// helmTools are the external tools the chart's checks run, installed by
// integration/helm/setup.sh, which writes their paths to
// integration/.work/helm.env.
type helmTools struct {
	helm, kubeconform string
	k8sSchemas        string   // <dir>/v<version>-local-strict/<kind>-<group>-<version>.json
	crdSchemas        string   // <dir>/<kind>_<version>.json
	versions          []string // Kubernetes versions with schemas
}

// needHelmTools reads the tools' environment. Without it the test is
// skipped, unless RCP_REQUIRE_ENGINES is set (CI), where it fails.
func needHelmTools(t *testing.T) helmTools {
	t.Helper()
	ht := helmTools{helm: os.Getenv("RCP_HELM"), kubeconform: os.Getenv("RCP_KUBECONFORM"),
		k8sSchemas: os.Getenv("RCP_K8S_SCHEMAS"), crdSchemas: os.Getenv("RCP_CRD_SCHEMAS"),
		versions: strings.Fields(os.Getenv("RCP_K8S_VERSIONS"))}
	if ht.helm == "" || ht.kubeconform == "" || ht.k8sSchemas == "" || ht.crdSchemas == "" || len(ht.versions) == 0 {
		const msg = "RCP_HELM, RCP_KUBECONFORM, RCP_K8S_SCHEMAS, RCP_CRD_SCHEMAS and RCP_K8S_VERSIONS are not all set: run integration/helm/setup.sh and source integration/.work/helm.env"
		if os.Getenv("RCP_REQUIRE_ENGINES") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return ht
}

// run executes a tool with stdin and returns its stdout, failing the test
// (with stderr) when it exits non-zero.
func run(t *testing.T, stdin []byte, name string, args ...string) []byte {
	t.Helper()
	out, err := runErr(t, stdin, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return out
}

func runErr(t *testing.T, stdin []byte, name string, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = repoRoot(t)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return append(stdout.Bytes(), stderr.Bytes()...), err
	}
	return stdout.Bytes(), nil
}

// shapes are the chart's two deployment shapes with the values files CI
// renders them with, and the objects each must produce (kind → count).
var shapes = []struct {
	name, values string
	kinds        map[string]int
}{
	{"standalone", chartDir + "/ci/standalone-values.yaml", map[string]int{
		"ServiceAccount": 1, "ConfigMap": 1, "Secret": 2, "Service": 1, "Deployment": 1,
		"PodDisruptionBudget": 1, "HorizontalPodAutoscaler": 1, "ServiceMonitor": 1}},
	{"sidecar", chartDir + "/ci/sidecar-values.yaml", map[string]int{"ConfigMap": 1, "Secret": 1, "Deployment": 1}},
	{"defaults", "", map[string]int{
		"ServiceAccount": 1, "ConfigMap": 1, "Secret": 1, "Service": 1, "Deployment": 1,
		"PodDisruptionBudget": 1, "HorizontalPodAutoscaler": 1}},
}

// template renders the chart for a Kubernetes version with a values file
// ("" for the chart's defaults) and extra --set flags.
func (ht helmTools) template(t *testing.T, version, values string, set ...string) []byte {
	t.Helper()
	args := []string{"template", "rel", chartDir, "--namespace", "search", "--kube-version", version}
	if values != "" {
		args = append(args, "-f", values)
	}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	return run(t, nil, ht.helm, args...)
}

// validate runs kubeconform on rendered manifests strictly against the schemas
// of one Kubernetes version (and the ServiceMonitor CRD's) and returns
// its per-resource verdicts. A kind without a schema is an error, not a
// skip.
func (ht helmTools) validate(t *testing.T, version string, manifests []byte) ([]kubeconformResource, error) {
	t.Helper()
	out, err := runErr(t, manifests, ht.kubeconform, "-strict", "-output", "json", "-verbose",
		"-kubernetes-version", version,
		"-schema-location", "file://"+ht.k8sSchemas+"/{{ .NormalizedKubernetesVersion }}-local{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json",
		"-schema-location", "file://"+ht.crdSchemas+"/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json",
		"-")
	var rep struct {
		Resources []kubeconformResource `json:"resources"`
	}
	if jerr := json.Unmarshal(out, &rep); jerr != nil {
		t.Fatalf("kubeconform output is not its JSON report (%v): %s", jerr, out)
	}
	return rep.Resources, err
}

type kubeconformResource struct {
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Status string `json:"status"`
	Msg    string `json:"msg"`
}

// TestHelmLint runs `helm lint --strict` on each shape at each version.
func TestHelmLint(t *testing.T) {
	ht := needHelmTools(t)
	for _, sh := range shapes {
		for _, v := range ht.versions {
			t.Run(sh.name+"/"+v, func(t *testing.T) {
				args := []string{"lint", "--strict", chartDir, "--kube-version", v}
				if sh.values != "" {
					args = append(args, "-f", sh.values)
				}
				run(t, nil, ht.helm, args...)
			})
		}
	}
}

// TestHelmSchemas renders every shape for the oldest and the newest
// Kubernetes version the chart supports and validates every object
// against that version's OpenAPI schemas (and the ServiceMonitor CRD),
// rejecting unknown fields.
func TestHelmSchemas(t *testing.T) {
	ht := needHelmTools(t)
	for _, sh := range shapes {
		for _, v := range ht.versions {
			t.Run(sh.name+"/"+v, func(t *testing.T) {
				res, err := ht.validate(t, v, ht.template(t, v, sh.values))
				kinds := map[string]int{}
				for _, r := range res {
					if r.Status != "statusValid" {
						t.Errorf("%s %s: %s %s", r.Kind, r.Name, r.Status, r.Msg)
					}
					kinds[r.Kind]++
				}
				if err != nil {
					t.Errorf("kubeconform: %v", err)
				}
				if fmt.Sprint(kinds) != fmt.Sprint(sh.kinds) {
					t.Errorf("validated %v, want %v", kinds, sh.kinds)
				}
			})
		}
	}
}

// TestHelmSchemasReject proves the validation can fail: objects with an
// unknown field, a wrong type or a field the version does not know are
// reported invalid.
func TestHelmSchemasReject(t *testing.T) {
	ht := needHelmTools(t)
	v := ht.versions[len(ht.versions)-1]
	base := string(ht.template(t, v, chartDir+"/ci/standalone-values.yaml"))
	tests := []struct{ name, old, new, kind string }{
		{"unknown container field", "imagePullPolicy: IfNotPresent", "imagePullPolicy: IfNotPresent\n          restartPolicyy: Always", "Deployment"},
		{"wrong type", "periodSeconds: 20", "periodSeconds: twenty", "Deployment"},
		{"unknown HPA field", "minReplicas: 2", "minReplicas: 2\n  minReplica: 2", "HorizontalPodAutoscaler"},
		{"unknown ServiceMonitor field", "scrapeTimeout: 10s", "scrapeTimeout: 10s\n      scrapeTimout: 10s", "ServiceMonitor"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(base, tc.old) {
				t.Fatalf("rendered chart has no %q to alter", tc.old)
			}
			res, err := ht.validate(t, v, []byte(strings.Replace(base, tc.old, tc.new, 1)))
			if err == nil {
				t.Error("kubeconform accepted the altered objects")
			}
			for _, r := range res {
				if (r.Kind == tc.kind) != (r.Status == "statusInvalid") {
					t.Errorf("%s %s: %s, want invalid exactly for the altered %s", r.Kind, r.Name, r.Status, tc.kind)
				}
			}
		})
	}
}

// TestHelmValuesSchema: values.schema.json turns bad values into an error
// before anything is rendered.
func TestHelmValuesSchema(t *testing.T) {
	ht := needHelmTools(t)
	tests := []struct{ set, want string }{
		{"mode=daemonset", "/mode"},
		{"http.port=70000", "/http/port"},
		{"http.basePath=rcp", "/http/basePath"},
		{"replica=3", "replica"},
		{"sidecar.workload.name=My_App", "/sidecar/workload/name"},
		{"probes.liveness.periodSeconds=0", "/probes/liveness/periodSeconds"},
	}
	for _, tc := range tests {
		t.Run(tc.set, func(t *testing.T) {
			out, err := runErr(t, nil, ht.helm, "template", "rel", chartDir, "--kube-version", ht.versions[0], "--set", tc.set)
			if err == nil || !strings.Contains(string(out), tc.want) {
				t.Errorf("--set %s: err %v, output %s; want a values schema error at %s", tc.set, err, out, tc.want)
			}
		})
	}
}

// rendered indexes rendered objects by kind.
func rendered(t *testing.T, manifests []byte) map[string][]map[string]any {
	t.Helper()
	out := map[string][]map[string]any{}
	dec := yaml.NewDecoder(bytes.NewReader(manifests))
	for {
		var d map[string]any
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("helm template output: %v", err)
		}
		if d != nil {
			out[str(d["kind"])] = append(out[str(d["kind"])], d)
		}
	}
}

// rcpContainer is the container named rcp-sidecar and the list it is in.
func rcpContainer(t *testing.T, pod map[string]any) (map[string]any, string) {
	t.Helper()
	for _, list := range []string{"initContainers", "containers"} {
		for _, c := range s(pod[list]) {
			if str(m(c)["name"]) == "rcp-sidecar" {
				return m(c), list
			}
		}
	}
	t.Fatal("no container named rcp-sidecar")
	return nil, ""
}

// TestHelmShapes checks what each rendered shape promises an operator:
// where the sidecar runs, probes on /readyz and /healthz that reach the
// address it listens on, the security context, resources, and that the
// ConfigMap's configuration loads with the sidecar's own loader.
func TestHelmShapes(t *testing.T) {
	ht := needHelmTools(t)
	for _, sh := range shapes[:2] {
		t.Run(sh.name, func(t *testing.T) {
			objs := rendered(t, ht.template(t, ht.versions[0], sh.values))
			deps := objs["Deployment"]
			if len(deps) != 1 {
				t.Fatalf("%d Deployments, want 1", len(deps))
			}
			tpl := m(m(deps[0]["spec"])["template"])
			pod := m(tpl["spec"])
			c, list := rcpContainer(t, pod)
			if sh.name == "sidecar" {
				checkNativeSidecar(t, pod, c, list)
			} else {
				checkStandalone(t, objs, deps[0], pod, c, list)
			}
			checkSecurity(t, c)
			checkResources(t, c)
			listen := checkConfig(t, objs, pod, c)
			checkProbes(t, c, listen, sh.name == "sidecar")
			checkCursorKey(t, objs, c)
		})
	}
}

// TestHelmCursorKey: every render generates its own random cursor key
// (the chart hard-codes none), and an existingSecret replaces the
// generated Secret in the container's environment.
func TestHelmCursorKey(t *testing.T) {
	ht := needHelmTools(t)
	keyOf := func(objs map[string][]map[string]any) string {
		for _, sec := range objs["Secret"] {
			if str(m(sec["metadata"])["name"]) == "rel-rcp-sidecar-cursor" {
				return str(m(sec["stringData"])["cursor-key"])
			}
		}
		return ""
	}
	a, b := keyOf(rendered(t, ht.template(t, ht.versions[0], ""))), keyOf(rendered(t, ht.template(t, ht.versions[0], "")))
	if a == "" || a == b {
		t.Fatalf("two renders gave the cursor keys %q and %q, want two random keys", a, b)
	}
	objs := rendered(t, ht.template(t, ht.versions[0], "", "cursorKey.existingSecret=my-cursor", "cursorKey.secretKey=k1"))
	if keyOf(objs) != "" {
		t.Error("a cursor Secret is generated beside cursorKey.existingSecret")
	}
	c, _ := rcpContainer(t, m(m(m(objs["Deployment"][0]["spec"])["template"])["spec"]))
	if ref := cursorKeyRef(c); str(ref["name"]) != "my-cursor" || str(ref["key"]) != "k1" {
		t.Errorf("RCP_CURSOR_KEY from %v, want my-cursor/k1", ref)
	}
}

// cursorKeyRef is the secretKeyRef RCP_CURSOR_KEY is read from.
func cursorKeyRef(c map[string]any) map[string]any {
	for _, e := range s(c["env"]) {
		if str(m(e)["name"]) == "RCP_CURSOR_KEY" {
			return m(m(m(e)["valueFrom"])["secretKeyRef"])
		}
	}
	return nil
}

// checkCursorKey: the sidecar reads server.cursor_keys from
// RCP_CURSOR_KEY, which comes from a Secret the chart generates with a
// key the configuration loader accepts, kept on upgrade and uninstall.
func checkCursorKey(t *testing.T, objs map[string][]map[string]any, c map[string]any) {
	t.Helper()
	ref := cursorKeyRef(c)
	var sec map[string]any
	for _, x := range objs["Secret"] {
		if str(m(x["metadata"])["name"]) == str(ref["name"]) {
			sec = x
		}
	}
	if sec == nil {
		t.Fatalf("RCP_CURSOR_KEY refers to %v; no such Secret is rendered", ref)
	}
	if pol := str(m(m(sec["metadata"])["annotations"])["helm.sh/resource-policy"]); pol != "keep" {
		t.Errorf("cursor Secret resource-policy %q, want keep", pol)
	}
	key := str(m(sec["stringData"])[str(ref["key"])])
	srv := config.Server{CursorKeys: []config.CursorKey{{Value: config.Secret(key)}}}
	if ks, err := srv.CursorKeyBytes(); err != nil || len(ks) != 1 {
		t.Errorf("generated cursor key: %v", err)
	}
	cfg, err := config.Parse([]byte(configMapConfig(t, objs, m(m(m(objs["Deployment"][0]["spec"])["template"])["spec"]), c)), registry())
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Server.CursorKeys) != 1 || cfg.Server.CursorKeys[0].Env != "RCP_CURSOR_KEY" {
		t.Errorf("server.cursor_keys %+v, want [{env: RCP_CURSOR_KEY}]", cfg.Server.CursorKeys)
	}
}

func checkNativeSidecar(t *testing.T, pod, c map[string]any, list string) {
	t.Helper()
	if list != "initContainers" || str(c["restartPolicy"]) != "Always" {
		t.Errorf("sidecar in %s with restartPolicy %q, want an init container with restartPolicy Always", list, c["restartPolicy"])
	}
	if first := m(s(pod["initContainers"])[0]); str(first["name"]) != "rcp-sidecar" {
		t.Errorf("first init container is %v, want rcp-sidecar (it must be up before the others)", first["name"])
	}
	var apps []string
	for _, a := range s(pod["containers"]) {
		apps = append(apps, str(m(a)["name"]))
	}
	if !slices.Equal(apps, []string{"app"}) {
		t.Errorf("application containers %v, want the workload's [app] unchanged", apps)
	}
	var vols []string
	for _, v := range s(pod["volumes"]) {
		vols = append(vols, str(m(v)["name"]))
	}
	if !slices.Equal(vols, []string{"scratch", "rcp-sidecar-config"}) {
		t.Errorf("volumes %v, want the workload's plus rcp-sidecar-config", vols)
	}
	if c["ports"] != nil {
		t.Errorf("sidecar declares ports %v; it is private to the pod", c["ports"])
	}
}

func checkStandalone(t *testing.T, objs map[string][]map[string]any, dep, pod, c map[string]any, list string) {
	t.Helper()
	if list != "containers" {
		t.Errorf("standalone sidecar is in %s, want containers", list)
	}
	name := str(m(dep["metadata"])["name"])
	podLabels := m(m(m(m(dep["spec"])["template"])["metadata"])["labels"])
	matches := func(sel map[string]any) bool {
		for k, v := range sel {
			if podLabels[k] != v {
				return false
			}
		}
		return len(sel) > 0
	}
	svc := objs["Service"][0]
	if !matches(m(m(svc["spec"])["selector"])) {
		t.Errorf("Service selector %v does not select the pods %v", m(svc["spec"])["selector"], podLabels)
	}
	port := m(s(m(svc["spec"])["ports"])[0])
	if str(port["targetPort"]) != "http" || str(m(s(c["ports"])[0])["name"]) != "http" {
		t.Errorf("Service targets %v, container ports %v", port["targetPort"], c["ports"])
	}
	pdb := objs["PodDisruptionBudget"][0]
	if !matches(m(m(m(pdb["spec"])["selector"])["matchLabels"])) {
		t.Error("PodDisruptionBudget does not select the pods")
	}
	hpa := m(objs["HorizontalPodAutoscaler"][0]["spec"])
	if ref := m(hpa["scaleTargetRef"]); str(ref["kind"]) != "Deployment" || str(ref["name"]) != name {
		t.Errorf("HPA scales %v, want Deployment %s", ref, name)
	}
	if _, ok := m(dep["spec"])["replicas"]; ok {
		t.Error("Deployment sets replicas while the HPA owns them")
	}
	sm := m(objs["ServiceMonitor"][0]["spec"])
	if !matches(m(m(sm["selector"])["matchLabels"])) {
		t.Error("ServiceMonitor selector does not match the Service's pods")
	}
	if ep := m(s(sm["endpoints"])[0]); str(ep["port"]) != "http" || str(ep["path"]) != config.DefaultMetricsPath {
		t.Errorf("ServiceMonitor scrapes %v %v, want port http path %s", ep["port"], ep["path"], config.DefaultMetricsPath)
	}
	if pod["automountServiceAccountToken"] != false {
		t.Error("the pod mounts a service account token it does not need")
	}
}

func checkSecurity(t *testing.T, c map[string]any) {
	t.Helper()
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
		{"seccomp RuntimeDefault", str(m(sc["seccompProfile"])["type"]) == "RuntimeDefault"},
	}
	for _, ck := range checks {
		if !ck.ok {
			t.Errorf("rcp-sidecar container: %s does not hold (%v)", ck.name, sc)
		}
	}
}

func checkResources(t *testing.T, c map[string]any) {
	t.Helper()
	r := m(c["resources"])
	for _, k := range []string{"requests.cpu", "requests.memory", "limits.memory"} {
		a, b, _ := strings.Cut(k, ".")
		if m(r[a])[b] == nil {
			t.Errorf("rcp-sidecar container has no %s", k)
		}
	}
	// The binary collects at GOGC=400; the soft heap limit must follow the
	// container's memory limit.
	for _, e := range s(c["env"]) {
		if str(m(e)["name"]) == "GOMEMLIMIT" {
			if got := str(m(m(m(e)["valueFrom"])["resourceFieldRef"])["resource"]); got != "limits.memory" {
				t.Errorf("GOMEMLIMIT from %q, want the container's limits.memory", got)
			}
			return
		}
	}
	t.Error("rcp-sidecar container has no GOMEMLIMIT")
}

// checkConfig loads the mounted configuration with the container's
// environment (envFrom secrets stubbed, secretKeyRef values as rendered)
// through the sidecar's own loader and returns the address it listens on.
func checkConfig(t *testing.T, objs map[string][]map[string]any, pod, c map[string]any) string {
	t.Helper()
	clearRCPEnv(t)
	for _, e := range s(c["env"]) {
		setContainerEnv(t, m(e), objs["Secret"])
	}
	for _, ef := range s(c["envFrom"]) {
		name := str(m(m(ef)["secretRef"])["name"])
		found := false
		for _, sec := range objs["Secret"] {
			if str(m(sec["metadata"])["name"]) == name {
				found = true
				for k := range m(sec["stringData"]) {
					t.Setenv(k, "stub-"+k)
				}
			}
		}
		if !found {
			// An existingSecret: stub what the configuration references.
			t.Setenv("RCP_ES_API_KEY", "stub-existing-secret")
		}
	}
	cfg, err := config.Parse([]byte(configMapConfig(t, objs, pod, c)), registry())
	if err != nil {
		t.Fatalf("rendered config.yaml: %v", err)
	}
	if cfg.Server.HTTP.BasePath != "/rcp" {
		t.Errorf("base path %q, want /rcp", cfg.Server.HTTP.BasePath)
	}
	return cfg.Server.HTTP.Listen
}

// checkProbes: startup and readiness ask /readyz, liveness /healthz, at
// the address the sidecar listens on (exec rcp-healthcheck on loopback
// as a sidecar; httpGet on the named port standalone).
func checkProbes(t *testing.T, c map[string]any, listen string, loopback bool) {
	t.Helper()
	wantHost := "0.0.0.0"
	if loopback {
		wantHost = "127.0.0.1"
	}
	if host, _, _ := strings.Cut(listen, ":"); host != wantHost {
		t.Errorf("listens on %s, want host %s", listen, wantHost)
	}
	port := listen[strings.LastIndex(listen, ":")+1:]
	for _, tc := range []struct{ probe, path string }{
		{"startupProbe", "/readyz"}, {"readinessProbe", "/readyz"}, {"livenessProbe", "/healthz"},
	} {
		p := m(c[tc.probe])
		if loopback {
			cmd := strs(m(p["exec"])["command"])
			if len(cmd) != 2 || cmd[0] != "/usr/local/bin/rcp-healthcheck" {
				t.Errorf("%s exec %v, want rcp-healthcheck URL", tc.probe, cmd)
				continue
			}
			u, err := url.Parse(cmd[1])
			if err != nil || u.Host != "127.0.0.1:"+port || u.Path != tc.path {
				t.Errorf("%s asks %s, want http://127.0.0.1:%s%s", tc.probe, cmd[1], port, tc.path)
			}
			continue
		}
		g := m(p["httpGet"])
		cport := ""
		for _, cp := range s(c["ports"]) {
			if str(m(cp)["name"]) == str(g["port"]) {
				cport = str(m(cp)["containerPort"])
			}
		}
		if str(g["path"]) != tc.path || cport != port {
			t.Errorf("%s httpGet %v (container port %q), want %s on %s", tc.probe, g, cport, tc.path, port)
		}
	}
}

// TestHelmState: several standalone replicas (replicas > 1 or autoscaling)
// with sessions or per-key rate limits need the store they share; without
// state.url the chart refuses to render and says why, unless
// state.allowPerReplica accepts per-replica state. state.url becomes the
// configuration's state.url, which the sidecar's own loader accepts.
func TestHelmState(t *testing.T) {
	ht := needHelmTools(t)
	const (
		sessions = `config.session={}`
		rated    = `config.access={"keys":[{"id":"app","env":"RCP_APP_KEY","rate":{"rps":20,"burst":20}}]}`
	)
	tests := []struct {
		name    string
		setJSON []string
		set     []string
		fail    string // "" renders
		url     string // the rendered config's state.url
	}{
		{"defaults: nothing per replica", nil, nil, "", ""},
		{"sessions, autoscaling, no store", []string{sessions}, nil, "retrieve sessions", ""},
		{"rate limits, 3 replicas, no store", []string{rated}, []string{"autoscaling.enabled=false", "replicas=3"}, "per-key rate limits", ""},
		{"sessions and rate limits, no store", []string{sessions, rated}, nil, "retrieve sessions (sessionId suppression) and per-key rate limits", ""},
		{"sessions with a store", []string{sessions, rated}, []string{"state.url=redis://valkey.search.svc:6379/0"}, "", "redis://valkey.search.svc:6379/0"},
		{"store in the config itself", []string{sessions, `config.state={"url":"rediss://cache:6380"}`}, nil, "", "rediss://cache:6380"},
		{"one replica needs no store", []string{sessions, rated}, []string{"autoscaling.enabled=false", "replicas=1"}, "", ""},
		{"per replica accepted", []string{sessions}, []string{"state.allowPerReplica=true"}, "", ""},
		{"sidecar mode: each pod its own", []string{sessions}, []string{"mode=sidecar"}, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"template", "rel", chartDir, "--namespace", "search", "--kube-version", ht.versions[0]}
			for _, s := range tc.setJSON {
				args = append(args, "--set-json", s)
			}
			for _, s := range tc.set {
				args = append(args, "--set", s)
			}
			out, err := runErr(t, nil, ht.helm, args...)
			if tc.fail != "" {
				if err == nil || !strings.Contains(string(out), tc.fail) || !strings.Contains(string(out), "state.url") {
					t.Fatalf("rendered (err %v), want a failure naming %q and state.url:\n%.600s", err, tc.fail, out)
				}
				return
			}
			if err != nil {
				t.Fatalf("helm template: %v\n%s", err, out)
			}
			objs := rendered(t, out)
			deps := objs["Deployment"]
			if len(deps) != 1 {
				t.Fatalf("%d Deployments, want 1", len(deps))
			}
			pod := m(m(m(deps[0]["spec"])["template"])["spec"])
			c, _ := rcpContainer(t, pod)
			clearRCPEnv(t)
			for _, e := range s(c["env"]) {
				setContainerEnv(t, m(e), objs["Secret"])
			}
			t.Setenv("RCP_ES_API_KEY", "stub-api-key")
			t.Setenv("RCP_APP_KEY", "stub-app-key-0123456789")
			cfg, err := config.Parse([]byte(configMapConfig(t, objs, pod, c)), registry())
			if err != nil {
				t.Fatalf("rendered config.yaml: %v", err)
			}
			got := ""
			if cfg.State != nil {
				got = cfg.State.URL
			}
			if got != tc.url {
				t.Fatalf("config state.url %q, want %q", got, tc.url)
			}
		})
	}
}
