package config

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	goccy "github.com/goccy/go-yaml"
	goccyparser "github.com/goccy/go-yaml/parser"
	"go.yaml.in/yaml/v3"
)

// Error is a configuration error located in the file: the line and
// column (1-based) of the offending key or token, and that line as
// written (values of keys that look like credentials masked). Load sets
// File; Parse leaves it empty.
type Error struct {
	File         string
	Line, Column int
	Source       string
	Err          error
}

// Error is "FILE:LINE:COLUMN: message" (or "line L, column C: message"),
// then the line and a caret under the column.
func (e *Error) Error() string {
	where := fmt.Sprintf("line %d, column %d", e.Line, e.Column)
	if e.File != "" {
		where = fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Column)
	}
	num := strconv.Itoa(e.Line)
	caret := strings.Repeat(" ", max(e.Column-1, 0)) + "^"
	return fmt.Sprintf("%s: %v\n  %s | %s\n  %s | %s", where, e.Err, num, e.Source, strings.Repeat(" ", len(num)), caret)
}

// Unwrap returns the error located.
func (e *Error) Unwrap() error { return e.Err }

// pathError is an error about the key at a dotted path
// ("backends[1].settings.tls.insecure"); its message is err's.
type pathError struct {
	path string
	err  error
}

func (e *pathError) Error() string { return e.err.Error() }
func (e *pathError) Unwrap() error { return e.err }

// syntaxError locates a YAML syntax error. yaml.v3 (which viper reads
// with) names the line where the enclosing mapping starts, counted from
// 0, and keeps the offending token's position to itself; goccy/go-yaml
// reports the offending token. When goccy finds nothing wrong, or names
// a line the file does not have (it can, in a file mixing "\r" and
// "\r\n" line breaks), err is returned as yaml.v3 put it.
func syntaxError(data []byte, err error) error {
	_, perr := goccyparser.ParseBytes(data, 0)
	var se *goccy.SyntaxError
	if !errors.As(perr, &se) || se.Token == nil || se.Token.Position == nil {
		return fmt.Errorf("parse yaml: %w", err)
	}
	p := se.Token.Position
	if p.Line < 1 || p.Line > len(yamlLines(data)) {
		return fmt.Errorf("parse yaml: %w", err)
	}
	return newError(data, p.Line, p.Column, fmt.Errorf("parse yaml: %s", se.Message))
}

// leadingPath is the dotted key path most messages of this package start
// with ("server.http.listen: …", "backends[0].settings (docs): …").
var leadingPath = regexp.MustCompile(`^([A-Za-z0-9_]+(?:\[\d+\])*(?:\.[A-Za-z0-9_]+(?:\[\d+\])*)*)(?::| \()`)

// locate turns err into an *Error at the key it is about, found in
// data's YAML nodes: a pathError's path, a decoding error's field, or
// the path the message starts with; the deepest key of that path present
// in the file is the one shown. Errors about no key in the file (or
// already located) are returned as they are.
func locate(data []byte, err error) error {
	var located *Error
	if errors.As(err, &located) {
		return err
	}
	path := ""
	var pe *pathError
	var de *mapstructure.DecodeError
	switch {
	case errors.As(err, &pe):
		path = pe.path
	case errors.As(err, &de):
		path = de.Name()
	default:
		if m := leadingPath.FindStringSubmatch(err.Error()); m != nil {
			path = m[1]
		}
	}
	if path == "" {
		return err
	}
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil || len(root.Content) == 0 {
		return err
	}
	n := find(root.Content[0], splitPath(path))
	if n == nil {
		return err
	}
	e := newError(data, n.Line, n.Column, err)
	if secretPath.MatchString(path) {
		e.Source = maskAll(e.Source) // under a credential's key every value is one
	}
	return e
}

// splitPath splits "backends[1].settings.url" into "backends", "[1]",
// "settings", "url".
func splitPath(path string) []string {
	var out []string
	for _, part := range strings.Split(path, ".") {
		name, idx, _ := strings.Cut(part, "[")
		if name != "" {
			out = append(out, name)
		}
		if idx != "" {
			for _, i := range strings.Split("["+idx, "[")[1:] {
				out = append(out, "["+i)
			}
		}
	}
	return out
}

// find walks n along path and returns the node of the deepest step
// present: a mapping key (matched case-insensitively, as the decoder
// does) or a sequence item; nil when not even the first step is there.
func find(n *yaml.Node, path []string) *yaml.Node {
	var found *yaml.Node
	for _, step := range path {
		for n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		var next, at *yaml.Node
		switch {
		case strings.HasPrefix(step, "[") && n.Kind == yaml.SequenceNode:
			i, err := strconv.Atoi(strings.TrimSuffix(step[1:], "]"))
			if err == nil && i >= 0 && i < len(n.Content) {
				next, at = n.Content[i], n.Content[i]
			}
		case n.Kind == yaml.MappingNode:
			for j := 0; j+1 < len(n.Content); j += 2 {
				if strings.EqualFold(n.Content[j].Value, step) {
					next, at = n.Content[j+1], n.Content[j]
				}
			}
		}
		if next == nil {
			return found
		}
		n, found = next, at
	}
	return found
}

// newError is an *Error at line and column of data.
func newError(data []byte, line, column int, err error) *Error {
	src := ""
	if lines := yamlLines(data); line >= 1 && line <= len(lines) {
		src = maskSecrets(lines[line-1])
		if underSecret(lines, line-1) {
			src = maskAll(src)
		}
	}
	return &Error{Line: line, Column: column, Source: src, Err: err}
}

// yamlLines splits data into lines as YAML counts them: "\r\n", a lone
// "\r" and "\n" each end a line, so a position the parsers report
// names the line it is on.
func yamlLines(data []byte) []string {
	return strings.Split(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(string(data)), "\n")
}

// underSecret reports whether a key that looks like a credential
// encloses lines[i] by indentation (a line the parser may not have read,
// so the node tree cannot say).
func underSecret(lines []string, i int) bool {
	indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " \t"))
	for j := i - 1; j >= 0 && indent > 0; j-- {
		l := strings.TrimRight(lines[j], "\r")
		body := strings.TrimLeft(l, " \t")
		if body == "" || strings.HasPrefix(body, "#") {
			continue
		}
		if in := len(l) - len(body); in < indent {
			if secretKey.MatchString(strings.TrimLeft(body, "- ")) {
				return true
			}
			indent = in
		}
	}
	return false
}

// maskAll keeps a quoted line's indentation, list dash and key, and
// prints the rest as "<secret>".
func maskAll(line string) string {
	rest := strings.TrimLeft(line, " \t-")
	keep := line[:len(line)-len(rest)]
	if k, _, ok := strings.Cut(rest, ":"); ok && !strings.ContainsAny(k, "{[\"'") {
		keep += k + ":"
	}
	return strings.TrimRight(keep, " ") + " <secret>"
}

// secretPath matches a key path with a credential-like key in it.
var secretPath = regexp.MustCompile(`(?i)password|secret|token|key|hash|credential`)

// secretKey matches a key that looks like a credential, and its colon.
var secretKey = regexp.MustCompile(`(?i)\b[A-Za-z0-9_]*(?:password|secret|token|key|hash|credential)[A-Za-z0-9_]*["']?\s*:`)

// maskSecrets replaces everything after the first credential-like key on
// a quoted line with "<secret>": an error must not print a password, and
// a flow value may hold several.
func maskSecrets(line string) string {
	if loc := secretKey.FindStringIndex(line); loc != nil {
		return line[:loc[1]] + " <secret>"
	}
	return line
}
