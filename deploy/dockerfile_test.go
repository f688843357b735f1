package deploy

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
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
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	if runtime.GOOS != "linux" {
		t.Skip("ELF checks need linux")
	}
	ldflags := dockerLDFlags(t)
	const version = "9.9.9-deploytest"
	bin := filepath.Join(t.TempDir(), "rcp-sidecar")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", strings.ReplaceAll(ldflags, "${VERSION}", version),
		"-o", bin, "./cmd/rcp-sidecar")
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	assertStatic(t, bin)
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "rcp-sidecar "+version+" ") {
		t.Errorf("version = %q (%v), want the stamped %s", out, err, version)
	}
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
