package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/rcp-sidecar/rcp-sidecar/internal/sidecar"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

type queryFlags struct {
	url    string
	mode   string
	k      int
	filter string
	json   bool
}

func newQueryCmd(g *sidecar.Flags) *cobra.Command {
	f := &queryFlags{}
	cmd := &cobra.Command{
		Use:   "query [flags] TEXT",
		Short: "Send one retrieve to a running server (--url) or to the configured backend in-process",
		Long: "Send one retrieve to a running server (--url) or to the configured backend in-process, and print\n" +
			"the hits as a table (or \"no hits\"). In-process logs go to stderr at warn level unless\n" +
			"--log-level asks for more; stdout holds only the result.",
		Example: `  rcp-sidecar query --demo --k 3 "how are comets' tails formed"` + "\n" +
			`  rcp-sidecar query --url http://127.0.0.1:8080/rcp --filter '{"field":"year","op":"gte","value":2020}' "vector search"`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runQuery(cmd, g, f, strings.Join(args, " "))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.url, "url", "", "base URL of a running RCP HTTP server, e.g. http://127.0.0.1:8080/rcp")
	fl.StringVar(&f.mode, "mode", "", "retrieval mode: sparse, dense or hybrid (default: the server's)")
	fl.IntVar(&f.k, "k", 10, "number of hits")
	fl.StringVar(&f.filter, "filter", "", `filter as JSON (§8), e.g. '{"field":"topic","op":"eq","value":"astronomy"}'`)
	fl.BoolVar(&f.json, "json", false, "print the raw result JSON")
	return cmd
}

func runQuery(cmd *cobra.Command, g *sidecar.Flags, f *queryFlags, text string) error {
	params, err := f.params(text)
	if err != nil {
		return err
	}
	c, closeFn, err := queryClient(cmd.Context(), g, f.url)
	if err != nil {
		return err
	}
	defer closeFn()
	if err := c.initialize(cmd.Context()); err != nil {
		return err
	}
	raw, err := c.call(cmd.Context(), rcp.MethodRetrieve, params)
	if err != nil {
		return err
	}
	if f.json {
		_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", raw)
		return err
	}
	var res rcp.RetrieveResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("decode retrieve result: %w", err)
	}
	return printHits(cmd.OutOrStdout(), &res)
}

func (f *queryFlags) params(text string) (map[string]any, error) {
	p := map[string]any{"query": text, "k": f.k}
	if f.mode != "" {
		p["mode"] = f.mode
	}
	if f.filter != "" {
		if !json.Valid([]byte(f.filter)) {
			return nil, fmt.Errorf("--filter is not valid JSON: %s", f.filter)
		}
		p["filter"] = json.RawMessage(f.filter)
	}
	return p, nil
}

// queryClient targets --url, or builds the configured backend and serves
// it in-process through the same HTTP handler.
func queryClient(ctx context.Context, g *sidecar.Flags, url string) (*rpcClient, func(), error) {
	if url != "" {
		return newRPCClient(url, http.DefaultClient), func() {}, nil
	}
	a, err := sidecar.Load(ctx, quietLogs(g))
	if err != nil {
		return nil, nil, err
	}
	hc := &http.Client{Transport: handlerTransport{a.Handler()}}
	return newRPCClient("http://in-process"+a.Config().Server.HTTP.BasePath, hc), a.Close, nil
}

// queryLogLevel is the in-process log level of `query` without
// --log-level: its output is the hit table, so the engine's INFO lines
// (corpus loaded, one per request) stay out of the terminal while
// warnings and errors still reach stderr. server.log_level is for serve.
const queryLogLevel = "warn"

// quietLogs returns g with the log level of `query` unless --log-level
// asks for another; logs always go to stderr, never to the table.
func quietLogs(g *sidecar.Flags) *sidecar.Flags {
	if g.LogLevel != "" {
		return g
	}
	q := *g
	q.LogLevel = queryLogLevel
	return &q
}

// noHits is printed instead of an empty table.
const noHits = "no hits"

func printHits(w io.Writer, res *rcp.RetrieveResult) error {
	if len(res.Hits) == 0 {
		fmt.Fprintln(w, noHits)
		printNotes(w, res)
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RANK\tID\tSCORE\tTITLE / TEXT")
	for i, h := range res.Hits {
		fmt.Fprintf(tw, "%d\t%s\t%.4f\t%s\n", i+1, h.ID, h.Score, snippet(hitLabel(h), 90))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	printNotes(w, res)
	return nil
}

func printNotes(w io.Writer, res *rcp.RetrieveResult) {
	if res.Usage != nil && len(res.Usage.Notes) > 0 {
		fmt.Fprintf(w, "notes: %s\n", strings.Join(res.Usage.Notes, "; "))
	}
}

func hitLabel(h rcp.Hit) string {
	title := ""
	if h.Citation != nil {
		title = h.Citation.Title
	}
	if t, ok := h.Meta["title"].(string); ok && title == "" {
		title = t
	}
	switch {
	case title != "" && h.Text != "":
		return title + " — " + h.Text
	case title != "":
		return title
	}
	return h.Text
}

// snippet shortens s to at most n runes on one line.
func snippet(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
