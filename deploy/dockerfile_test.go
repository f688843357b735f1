package deploy

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Dockerfile lines the image's promises rest on.
func TestDockerfileInvariants(t *testing.T) {
	df := string(readFile(t, "Dockerfile"))
	stages := regexp.MustCompile(`(?m)^FROM[ \t]+(.+)$`).FindAllStringSubmatch(df, -1)
	if len(stages) < 2 {
		t.Fatalf("%d FROM lines, want a multi-stage build", len(stages))
	}
	final := stages[len(stages)-1][1]
	tests := []struct {
		what string
		ok   bool
	}{
		{"build stage is golang", strings.Contains(stages[0][1], "golang:")},
		{"final stage is scratch or distroless static", final == "scratch" || strings.Contains(final, "distroless/static")},
		{"CGO disabled", strings.Contains(df, "CGO_ENABLED=0")},
		{"-trimpath", strings.Contains(df, "-trimpath")},
		{"version stamped", strings.Contains(df, "-X main.version=")},
		{"CA certificates copied", strings.Contains(df, "ca-certificates.crt")},
		{"non-root user", regexp.MustCompile(`(?m)^USER 65532(:65532)?$`).MatchString(df)},
		{"EXPOSE 8080", regexp.MustCompile(`(?m)^EXPOSE 8080$`).MatchString(df)},
		{"entrypoint serves", strings.Contains(df, `ENTRYPOINT ["/usr/local/bin/rcp-sidecar", "serve"]`)},
		{"healthcheck binary built", strings.Contains(df, "./deploy/healthcheck")},
	}
	for _, tc := range tests {
		if !tc.ok {
			t.Errorf("Dockerfile: %s does not hold", tc.what)
		}
	}
}

// TestStaticBuild builds the binary the way the Dockerfile does and checks
// it is a static executable (no ELF interpreter, no shared libraries) that
// reports the stamped version.
func TestStaticBuild(t *testing.T) {
	bin := dockerBuild(t, runtime.GOARCH)
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "rcp-sidecar "+stampedVersion+" ") {
		t.Errorf("version = %q (%v), want the stamped %s", out, err, stampedVersion)
	}
}

// TestMultiArchBuild: the Dockerfile builds for the target platform
// buildx passes (TARGETOS/TARGETARCH) on the build machine's platform; for
// the other architecture the image is published for, every package of the
// binary resolves with CGO off (no package is left without Go files), and
// the healthcheck binary cross-compiles to a static executable of that
// machine type. (A full cross build of the sidecar takes minutes on a
// busy CI machine; the package resolution is what breaks a cross build.)
func TestMultiArchBuild(t *testing.T) {
	df := string(readFile(t, "Dockerfile"))
	if !strings.Contains(df, "FROM --platform=$BUILDPLATFORM golang:") {
		t.Error("Dockerfile: the build stage does not run on $BUILDPLATFORM")
	}
	builds := regexp.MustCompile(`(?m)go build `).FindAllStringIndex(df, -1)
	if got := strings.Count(df, "GOOS=$TARGETOS GOARCH=$TARGETARCH go build"); got != len(builds) || got == 0 {
		t.Errorf("%d of %d go build lines target GOOS=$TARGETOS GOARCH=$TARGETARCH", got, len(builds))
	}
	if testing.Short() {
		t.Skip("cross-compiles; skipped with -short")
	}
	for _, arch := range []string{"amd64", "arm64"} {
		t.Run(arch, func(t *testing.T) {
			env := append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
			cmd := exec.Command("go", "list", "-e", "-deps", "-f", "{{if .Error}}{{.ImportPath}}: {{.Error}}{{end}}", "./cmd/rcp-sidecar")
			cmd.Dir, cmd.Env = repoRoot(t), env
			out, err := cmd.CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != "" {
				t.Errorf("go list for linux/%s: %v\n%s", arch, err, out)
			}
			bin := filepath.Join(t.TempDir(), "rcp-healthcheck")
			cmd = exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./deploy/healthcheck")
			cmd.Dir, cmd.Env = repoRoot(t), env
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("go build healthcheck for linux/%s: %v\n%s", arch, err, out)
			}
			assertStatic(t, bin)
			f, err := elf.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]
			if f.Machine != want {
				t.Errorf("GOARCH=%s build is for %v, want %v", arch, f.Machine, want)
			}
		})
	}
}

// stampedVersion is the VERSION build argument of the test builds.
const stampedVersion = "9.9.9-deploytest"

// builds caches the binaries dockerBuild made, by GOARCH, for the
// package's tests; TestMain removes them.
var builds = struct {
	sync.Mutex
	dir  string
	bins map[string]string
}{bins: map[string]string{}}

func TestMain(m *testing.M) {
	code := m.Run()
	if builds.dir != "" {
		os.RemoveAll(builds.dir)
	}
	os.Exit(code)
}

// dockerBuild builds rcp-sidecar for linux/goarch the way the Dockerfile
// does (CGO off, -trimpath, its -ldflags with VERSION stamped), checks it
// is static and returns its path. Skipped with -short and off linux.
func dockerBuild(t *testing.T, goarch string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	if runtime.GOOS != "linux" {
		t.Skip("ELF checks need linux")
	}
	builds.Lock()
	defer builds.Unlock()
	if bin, ok := builds.bins[goarch]; ok {
		return bin
	}
	if builds.dir == "" {
		dir, err := os.MkdirTemp("", "rcp-deploy-build-")
		if err != nil {
			t.Fatal(err)
		}
		builds.dir = dir
	}
	ldflags := strings.ReplaceAll(dockerLDFlags(t), "${VERSION}", stampedVersion)
	bin := filepath.Join(builds.dir, "rcp-sidecar-"+goarch)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", bin, "./cmd/rcp-sidecar")
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build (GOARCH=%s): %v\n%s", goarch, err, out)
	}
	assertStatic(t, bin)
	builds.bins[goarch] = bin
	return bin
}

// dockerLDFlags extracts the -ldflags of the rcp-sidecar build in the Dockerfile.
func dockerLDFlags(t *testing.T) string {
	t.Helper()
	re := regexp.MustCompile(`-ldflags "([^"]*)" -o /out/rcp-sidecar ./cmd/rcp-sidecar`)
	sub := re.FindStringSubmatch(string(readFile(t, "Dockerfile")))
	if sub == nil {
		t.Fatal("Dockerfile: no `-ldflags \"...\" -o /out/rcp-sidecar ./cmd/rcp-sidecar` build")
	}
	return sub[1]
}

func assertStatic(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s has a %v program header: dynamically linked", bin, p.Type)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("%s needs shared libraries %v", bin, libs)
	}
}
