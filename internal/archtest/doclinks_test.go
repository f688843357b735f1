package archtest

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestDocLinks checks every link in the Markdown files the repository
// ships (README.md, docs/ and the others; not node_modules, vendor or
// hidden and generated directories): a relative link must name a file or
// directory inside the repository, an #anchor must name a heading of its
// target page (GitHub's slug rules), and an http(s) link must be a
// well-formed absolute URL. External links are not fetched.
func TestDocLinks(t *testing.T) {
	root := moduleRoot(t)
	files, err := markdownFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Fatalf("found only %d Markdown files under %s", len(files), root)
	}
	for _, msg := range checkDocLinks(os.DirFS(root).(docFS), files) {
		t.Error(msg)
	}
}

// TestCheckDocLinks runs the checker over small page sets, broken and not.
func TestCheckDocLinks(t *testing.T) {
	pages := map[string]string{
		"docs/a.md": "# Page A\n\n## Running several replicas\n\n## Foo `bar` (baz)\n\n## Dup\n\n## Dup\n\n```sh\n# not a heading\n```\n",
		"code.go":   "package x\n",
		"dir/x.txt": "x",
	}
	cases := []struct {
		name, readme string
		bad          int
	}{
		{"file", "[a](docs/a.md)", 0},
		{"anchor", "[a](docs/a.md#running-several-replicas)", 0},
		{"anchor with code and punctuation", "[a](docs/a.md#foo-bar-baz)", 0},
		{"duplicate heading", "[a](docs/a.md#dup-1)", 0},
		{"missing duplicate", "[a](docs/a.md#dup-2)", 1},
		{"own anchor", "# Title\n\n[t](#title)", 0},
		{"own missing anchor", "# Title\n\n[t](#titel)", 1},
		{"heading inside code fence", "[a](docs/a.md#not-a-heading)", 1},
		{"missing file", "[a](docs/b.md)", 1},
		{"missing anchor", "[a](docs/a.md#running-replicas)", 1},
		{"directory", "[d](dir/)", 0},
		{"go file line", "[c](code.go#L3)", 0},
		{"anchor in non-Markdown", "[c](code.go#main)", 1},
		{"outside repository", "[o](../outside.md)", 1},
		{"link split over lines", "[a\nb](docs/a.md#nope)", 1},
		{"image", "![i](docs/missing.png)", 1},
		{"reference definition", "[r]: docs/missing.md", 1},
		{"link in code span", "`[a](docs/b.md)`", 0},
		{"link in code fence", "```\n[a](docs/b.md)\n```", 0},
		{"https", "[s](https://example.com/a#b)", 0},
		{"https without host", "[s](https://)", 1},
		{"http with space", "[s](<http://exa mple.com>)", 1},
		{"unknown scheme", "[s](javascript:alert(1))", 1},
		{"mailto", "[m](mailto:a@example.com)", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fsys := fstestMap(pages)
			fsys["README.md"] = c.readme + "\n"
			msgs := checkDocLinks(fsys, []string{"README.md"})
			if len(msgs) != c.bad {
				t.Errorf("%q: want %d broken links, got %d: %q", c.readme, c.bad, len(msgs), msgs)
			}
		})
	}
}

// TestGitHubSlug pins the heading-to-anchor rule.
func TestGitHubSlug(t *testing.T) {
	for h, want := range map[string]string{
		"Use it from an agent (MCP)":                 "use-it-from-an-agent-mcp",
		"Troubleshooting with `probe`":               "troubleshooting-with-probe",
		"2.5 Filters (Elasticsearch and OpenSearch)": "25-filters-elasticsearch-and-opensearch",
		"Tenancy (security)":                         "tenancy-security",
		"Rerank, sessions and feedback":              "rerank-sessions-and-feedback",
		"[Link](x.md) text":                          "link-text",
		"snake_case and **bold**":                    "snake_case-and-bold",
		"Ünïcode — dash":                             "ünïcode--dash",
	} {
		if got := githubSlug(h); got != want {
			t.Errorf("githubSlug(%q) = %q, want %q", h, got, want)
		}
	}
}

// fstestMap is a tiny read-only fs.FS over a map of file contents.
type fstestMap map[string]string

func (m fstestMap) Open(name string) (fs.File, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
}

func (m fstestMap) ReadFile(name string) ([]byte, error) {
	if s, ok := m[name]; ok {
		return []byte(s), nil
	}
	return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
}

func (m fstestMap) Stat(name string) (fs.FileInfo, error) {
	if _, ok := m[name]; ok {
		return nil, nil
	}
	for k := range m {
		if strings.HasPrefix(k, name+"/") {
			return nil, nil
		}
	}
	return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}

// markdownFiles lists the Markdown files under root that the repository
// ships, as slash paths relative to root.
func markdownFiles(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "vendor" || name == "site-packages") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".md") {
			r, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(r))
		}
		return nil
	})
	return files, err
}

// docFS is what the checker reads: file contents and existence.
type docFS interface {
	fs.ReadFileFS
	fs.StatFS
}

var (
	fenceRE    = regexp.MustCompile("^ {0,3}(```+|~~~+)")
	codeSpanRE = regexp.MustCompile("(`+)[^`]*?(`+)")
	// inlineLinkRE matches the destination of [text](dest) and
	// ![alt](dest), with an optional <…> and title.
	inlineLinkRE = regexp.MustCompile(`\]\(\s*(<[^>]*>|[^)\s]*(?:\([^)\s]*\)[^)\s]*)*)(?:\s+"[^"]*")?\s*\)`)
	refDefRE     = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s+(\S+)`)
	atxRE        = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	setextRE     = regexp.MustCompile(`^ {0,3}(=+|-+)\s*$`)
	htmlIDRE     = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
	lineAnchorRE = regexp.MustCompile(`^L\d+(-L\d+)?$`)
	mdLinkTextRE = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTagRE    = regexp.MustCompile(`<[^>]+>`)
	// emphasisRE matches '_' runs that open or close emphasis: at a word
	// boundary, not inside a word such as snake_case.
	emphasisRE = regexp.MustCompile(`(^|[^\pL\pN])_+|_+([^\pL\pN]|$)`)
)

// proseLines returns a page's lines with fenced code blocks blanked and
// inline code spans removed, so line numbers stay those of the file.
func proseLines(text string) []string {
	lines := strings.Split(text, "\n")
	var fence string
	for i, l := range lines {
		if m := fenceRE.FindStringSubmatch(l); m != nil {
			if fence == "" {
				fence = m[1][:1]
			} else if m[1][:1] == fence {
				fence = ""
			}
			lines[i] = ""
			continue
		}
		if fence != "" {
			lines[i] = ""
			continue
		}
		lines[i] = codeSpanRE.ReplaceAllString(l, "")
	}
	return lines
}

// githubSlug is the anchor GitHub gives a heading written as Markdown:
// its rendered text (code spans kept literally, link text without the
// destination, emphasis markers and HTML tags dropped) in lower case,
// keeping letters, digits, '_', '-' and spaces, each space turned into '-'.
func githubSlug(heading string) string {
	var text strings.Builder
	for i, part := range strings.Split(heading, "`") {
		if i%2 == 1 {
			text.WriteString(part)
			continue
		}
		part = mdLinkTextRE.ReplaceAllString(part, "$1")
		part = htmlTagRE.ReplaceAllString(part, "")
		part = emphasisRE.ReplaceAllString(part, "$1$2")
		text.WriteString(strings.ReplaceAll(part, "*", ""))
	}
	var b strings.Builder
	for _, r := range strings.ToLower(text.String()) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the set of anchors a Markdown page defines.
func anchors(text string) map[string]bool {
	raw := strings.Split(text, "\n")
	lines := proseLines(text)
	set := map[string]bool{}
	seen := map[string]int{}
	add := func(h string) {
		s := githubSlug(h)
		if n, ok := seen[s]; ok {
			seen[s] = n + 1
			s = s + "-" + strconv.Itoa(n+1)
		} else {
			seen[s] = 0
		}
		set[s] = true
	}
	for i, l := range lines {
		if m := atxRE.FindStringSubmatch(raw[i]); m != nil && l != "" {
			add(m[2])
		} else if i > 0 && l != "" && setextRE.MatchString(l) && strings.TrimSpace(lines[i-1]) != "" &&
			!strings.Contains(lines[i-1], "|") && atxRE.FindString(raw[i-1]) == "" {
			add(strings.TrimSpace(raw[i-1]))
		}
		for _, m := range htmlIDRE.FindAllStringSubmatch(l, -1) {
			set[m[1]] = true
		}
	}
	return set
}

// checkDocLinks checks the links of the given pages (slash paths in fsys)
// and returns one message per broken link.
func checkDocLinks(fsys docFS, pages []string) []string {
	var msgs []string
	cache := map[string]map[string]bool{}
	anchorsOf := func(p string) (map[string]bool, error) {
		if a, ok := cache[p]; ok {
			return a, nil
		}
		text, err := fsys.ReadFile(p)
		if err != nil {
			return nil, err
		}
		cache[p] = anchors(string(text))
		return cache[p], nil
	}
	for _, page := range pages {
		text, err := fsys.ReadFile(page)
		if err != nil {
			msgs = append(msgs, fmt.Sprintf("%s: %v", page, err))
			continue
		}
		// Join the page so that a link whose text spans lines is found;
		// positions are mapped back to line numbers.
		lines := proseLines(string(text))
		joined := strings.Join(lines, "\n")
		var dests [][2]string // dest, position
		for _, m := range inlineLinkRE.FindAllStringSubmatchIndex(joined, -1) {
			line := strings.Count(joined[:m[0]], "\n") + 1
			dests = append(dests, [2]string{joined[m[2]:m[3]], strconv.Itoa(line)})
		}
		for i, l := range lines {
			if m := refDefRE.FindStringSubmatch(l); m != nil {
				dests = append(dests, [2]string{m[1], strconv.Itoa(i + 1)})
			}
		}
		for _, d := range dests {
			if err := checkLink(fsys, page, strings.Trim(d[0], "<>"), anchorsOf); err != nil {
				msgs = append(msgs, fmt.Sprintf("%s:%s: link %q: %v", page, d[1], d[0], err))
			}
		}
	}
	return msgs
}

// checkLink checks one link destination found on page.
func checkLink(fsys docFS, page, dest string, anchorsOf func(string) (map[string]bool, error)) error {
	if scheme, _, ok := strings.Cut(dest, ":"); ok && !strings.ContainsAny(scheme, "/#?.") {
		switch strings.ToLower(scheme) {
		case "http", "https":
			u, err := url.Parse(dest)
			if err != nil {
				return err
			}
			if u.Host == "" || strings.ContainsAny(dest, " \t") {
				return fmt.Errorf("not an absolute URL with a host")
			}
			return nil
		case "mailto":
			return nil
		default:
			return fmt.Errorf("scheme %q is not allowed", scheme)
		}
	}
	if dest == "" {
		return fmt.Errorf("empty destination")
	}
	p, frag, _ := strings.Cut(dest, "#")
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	target := page
	if p != "" {
		unescaped, err := url.PathUnescape(p)
		if err != nil {
			return err
		}
		if strings.HasPrefix(unescaped, "/") {
			target = path.Clean(strings.TrimPrefix(unescaped, "/"))
		} else {
			target = path.Join(path.Dir(page), unescaped)
		}
		if target == ".." || strings.HasPrefix(target, "../") {
			return fmt.Errorf("points outside the repository")
		}
		if _, err := fsys.Stat(target); err != nil {
			return fmt.Errorf("%s does not exist", target)
		}
	}
	if frag == "" {
		return nil
	}
	if !strings.HasSuffix(target, ".md") {
		if lineAnchorRE.MatchString(frag) {
			return nil
		}
		return fmt.Errorf("anchor #%s on a file that is not Markdown", frag)
	}
	set, err := anchorsOf(target)
	if err != nil {
		return err
	}
	if f, err := url.PathUnescape(frag); err == nil && (set[f] || set[strings.ToLower(f)]) {
		return nil
	}
	return fmt.Errorf("%s has no heading with anchor #%s", target, frag)
}
