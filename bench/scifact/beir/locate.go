package beir

import (
	"archive/zip"
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ErrNotAvailable is wrapped by Locate's error when SciFact is in none of
// the places it looks and cannot be downloaded (no network, a timeout, a
// checksum mismatch): callers fall back to data they generate.
var ErrNotAvailable = errors.New("SciFact dataset not available")

// SciFactURL is BEIR's public copy of SciFact.
const SciFactURL = "https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets/scifact.zip"

// sciFactSHA256 are the SHA-256 sums of the plain (uncompressed) files of
// BEIR's SciFact that the tools read, so a downloaded copy is the very
// data the published figures were computed on. The corpus sum is that of
// corpus.jsonl as BEIR ships it (8,106,566 bytes), not of a gzipped copy.
var sciFactSHA256 = map[string]string{
	"corpus.jsonl":   "dec31c8182f3d744c7d2c09423756fd1d17cbef75808db13ba01cc0aab4d1ac6",
	"queries.jsonl":  "2f56a2591a0985e7a40ed5d7c20351ea7a831099137c1b11ae3bc69c377f2c7f",
	"qrels/test.tsv": "68c0ac63f1c24b9e8ce497649694f09b2d0850bab7ec2b103cc66996f5f8b3a3",
}

// maxFileBytes bounds each extracted file and the download (BEIR's
// SciFact zip is about 2.7 MB, its corpus 8.1 MB).
const maxFileBytes = 64 << 20

// Located is where Locate found SciFact.
type Located struct {
	// Dir holds corpus.jsonl.gz or corpus.jsonl, queries.jsonl and
	// qrels/test.tsv; pass it to Load.
	Dir string
	// From says which source it came from, for logs.
	From string
}

// Locator finds SciFact; the zero value looks where Locate does.
type Locator struct {
	// Env reads the environment (default os.Getenv).
	Env func(string) string
	// WorkDir is where the walk up to the repository root starts
	// (default: the working directory).
	WorkDir string
	// URL is the download location (default SciFactURL).
	URL string
	// Client downloads (default: a client with short timeouts).
	Client *http.Client
}

// Locate finds SciFact in this order:
//
//  1. $RCP_SCIFACT_DIR (an error if it does not hold the dataset);
//  2. ../shared/datasets/scifact beside the repository root, found by
//     walking up from the working directory to this module's go.mod;
//  3. ${RCP_CACHE:-~/.cache/rcp-sidecar}/scifact, when its files match
//     the embedded SHA-256 sums;
//  4. a download of BEIR's zip into that cache, verified against the
//     same sums, with short timeouts.
//
// When none works the error wraps ErrNotAvailable and says why.
func Locate(ctx context.Context) (Located, error) { return Locator{}.Locate(ctx) }

// Locate is the package-level Locate with l's settings.
func (l Locator) Locate(ctx context.Context) (Located, error) {
	env := l.Env
	if env == nil {
		env = os.Getenv
	}
	if d := env("RCP_SCIFACT_DIR"); d != "" {
		if err := hasDataset(d); err != nil {
			return Located{}, fmt.Errorf("RCP_SCIFACT_DIR=%s: %w", d, err)
		}
		return Located{Dir: d, From: "RCP_SCIFACT_DIR=" + d}, nil
	}
	var tried []string
	if root, err := RepoRoot(l.WorkDir); err != nil {
		tried = append(tried, err.Error())
	} else {
		d := filepath.Join(filepath.Dir(root), "shared", "datasets", "scifact")
		if hasDataset(d) == nil {
			return Located{Dir: d, From: d}, nil
		}
		tried = append(tried, "not beside the repository at "+d)
	}
	cache, err := datasetCacheDir(env)
	if err != nil {
		tried = append(tried, err.Error())
		return Located{}, fmt.Errorf("%w: %s", ErrNotAvailable, strings.Join(tried, "; "))
	}
	if verifyDir(cache) == nil {
		return Located{Dir: cache, From: "verified cache " + cache}, nil
	}
	url := l.URL
	if url == "" {
		url = SciFactURL
	}
	if err := download(ctx, l.client(), url, cache); err != nil {
		tried = append(tried, "not in the cache at "+cache, "download: "+err.Error())
		return Located{}, fmt.Errorf("%w: %s", ErrNotAvailable, strings.Join(tried, "; "))
	}
	return Located{Dir: cache, From: "downloaded from " + url + " into " + cache}, nil
}

func (l Locator) client() *http.Client {
	if l.Client != nil {
		return l.Client
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 5 * time.Second}).DialContext
	t.TLSHandshakeTimeout = 5 * time.Second
	t.ResponseHeaderTimeout = 10 * time.Second
	return &http.Client{Transport: t, Timeout: 60 * time.Second}
}

// modulePath is the module whose root RepoRoot looks for.
const modulePath = "github.com/rcp-sidecar/rcp-sidecar"

// RepoRoot walks up from dir (the working directory when empty) to the
// directory whose go.mod declares this module.
func RepoRoot(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && declaresModule(b) {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.mod of %s above %s", modulePath, dir)
		}
		d = parent
	}
}

func declaresModule(gomod []byte) bool {
	for line := range strings.Lines(string(gomod)) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" && strings.Trim(f[1], `"`) == modulePath {
			return true
		}
	}
	return false
}

// datasetCacheDir is ${RCP_CACHE:-~/.cache/rcp-sidecar}/scifact, the
// directory the vector cache uses too.
func datasetCacheDir(env func(string) string) (string, error) {
	base := env("RCP_CACHE")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no cache directory: set RCP_CACHE (%v)", err)
		}
		base = filepath.Join(home, ".cache", "rcp-sidecar")
	}
	return filepath.Join(base, "scifact"), nil
}

// hasDataset reports whether dir holds the three files Load reads.
func hasDataset(dir string) error {
	var missing []string
	if _, err := corpusPath(dir); err != nil {
		missing = append(missing, "corpus.jsonl(.gz)")
	}
	for _, f := range []string{"queries.jsonl", filepath.Join("qrels", "test.tsv")} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("no SciFact there (missing %s)", strings.Join(missing, ", "))
	}
	return nil
}

// corpusPath is dir's corpus.jsonl.gz, else its corpus.jsonl.
func corpusPath(dir string) (string, error) {
	for _, name := range []string{"corpus.jsonl.gz", "corpus.jsonl"} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: no corpus.jsonl.gz or corpus.jsonl", dir)
}

// verifyDir checks dir's files against the embedded SHA-256 sums; a
// gzipped corpus is checked decompressed.
func verifyDir(dir string) error {
	for name, want := range sciFactSHA256 {
		p := filepath.Join(dir, filepath.FromSlash(name))
		gz := false
		if name == "corpus.jsonl" {
			cp, err := corpusPath(dir)
			if err != nil {
				return err
			}
			p, gz = cp, strings.HasSuffix(cp, ".gz")
		}
		got, err := fileSHA256(p, gz)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("%s: SHA-256 %s, want %s", p, got, want)
		}
	}
	return nil
}

func fileSHA256(path string, gz bool) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var r io.Reader = bufio.NewReader(f)
	if gz {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(r, maxFileBytes+1)); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// download fetches the zip at url, extracts the three files into a
// temporary directory beside dest, verifies them, and only then moves
// them into dest, replacing stale copies and leaving every other file
// there (the vector cache shares the directory).
func download(ctx context.Context, c *http.Client, url, dest string) error {
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dest), ".scifact-download-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	zipPath := filepath.Join(tmp, "scifact.zip")
	if err := fetch(ctx, c, url, zipPath); err != nil {
		return err
	}
	staged := filepath.Join(tmp, "scifact")
	if err := extract(zipPath, staged); err != nil {
		return err
	}
	if err := verifyDir(staged); err != nil {
		return fmt.Errorf("downloaded copy does not match the expected checksums: %w", err)
	}
	// A gzipped corpus would shadow the plain one (see corpusPath).
	if err := os.Remove(filepath.Join(dest, "corpus.jsonl.gz")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for name := range sciFactSHA256 {
		to := filepath.Join(dest, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		if err := os.Rename(filepath.Join(staged, filepath.FromSlash(name)), to); err != nil {
			return err
		}
	}
	return nil
}

func fetch(ctx context.Context, c *http.Client, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := c.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d", url, res.StatusCode)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, io.LimitReader(res.Body, maxFileBytes+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > maxFileBytes {
		err = fmt.Errorf("GET %s: larger than %d bytes", url, maxFileBytes)
	}
	return err
}

// extract copies the files named in sciFactSHA256 out of the zip (BEIR
// nests them under scifact/) into dir.
func extract(zipPath, dir string) error {
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		return err
	}
	defer zr.Close()
	found := map[string]bool{}
	for _, f := range zr.File {
		name := strings.TrimPrefix(f.Name, "scifact/")
		if _, want := sciFactSHA256[name]; !want || found[name] {
			continue
		}
		if err := extractOne(f, filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			return err
		}
		found[name] = true
	}
	for name := range sciFactSHA256 {
		if !found[name] {
			return fmt.Errorf("zip has no %s", name)
		}
	}
	return nil
}

func extractOne(f *zip.File, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	n, err := io.Copy(out, io.LimitReader(rc, maxFileBytes+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > maxFileBytes {
		err = fmt.Errorf("%s: larger than %d bytes", f.Name, maxFileBytes)
	}
	return err
}
