package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/adapters/health"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// probeReport is the `probe --json` document.
type probeReport struct {
	Backend      string               `json:"backend"`
	Conformance  string               `json:"conformance"`
	Evidence     *capability.Evidence `json:"evidence"`
	Capabilities rcp.Capabilities     `json:"capabilities"`
	Reasons      []capability.Reason  `json:"reasons"`
	// Health is the engine's health of the backend's index or collection;
	// absent when the engine does not report it or the check failed.
	Health *adapters.Health `json:"health,omitempty"`
}

func newProbeCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "probe",
		Short: "Probe the backend and print the evidence and the capability set, with a reason for each",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := loadApp(cmd.Context(), g)
			if err != nil {
				return err
			}
			defer a.Close()
			r := probeReport{Backend: a.backend, Conformance: a.engine.Conformance(), Evidence: a.engine.Evidence(),
				Capabilities: a.engine.Capabilities(), Reasons: a.engine.Explain()}
			if h := a.health.Current(cmd.Context()); h.Status != adapters.HealthUnknown {
				r.Health = &h
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), r)
			}
			return printProbe(cmd.OutOrStdout(), r)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of text")
	return cmd
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // print "<secret>" as is
	return enc.Encode(v)
}

func printProbe(w io.Writer, r probeReport) error {
	ev := r.Evidence
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "backend\t%s\nengine\t%s %s\ntarget\t%s\ndocuments\t%d\nconformance\t%s\n",
		r.Backend, ev.Engine, ev.Version, ev.Target, ev.DocCount, r.Conformance)
	fmt.Fprintf(tw, "text fields\t%s\nvector fields\t%s\nfilter fields\t%s\n",
		textFields(ev.TextFields), vectorFields(ev.VectorFields), filterFields(ev.FilterFields))
	fmt.Fprintf(tw, "native\trrf=%t mmr=%t query-inference=%t writable=%t pagination=%t snapshots=%t\n",
		ev.NativeRRF, ev.NativeMMR, ev.QueryInference, ev.Writable, ev.Pagination, ev.Snapshots)
	if h := r.Health; h != nil {
		fmt.Fprintf(tw, "health\t%s %s\n", h.Of, h.State)
		if n := health.Note(r.Backend, *h); n != "" {
			fmt.Fprintf(tw, "note\t%s\n", n)
		}
	}
	for _, n := range ev.Notes {
		fmt.Fprintf(tw, "note\t%s\n", n)
	}
	fmt.Fprintln(tw, "\nCAPABILITY\tADVERTISED\tWHY")
	for _, rs := range r.Reasons {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", rs.Capability, yesNo(rs.Advertised), rs.Why)
	}
	return tw.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func textFields(fs []capability.TextField) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.Name
		if f.Boost != 0 && f.Boost != 1 {
			parts[i] += fmt.Sprintf("^%g", f.Boost)
		}
	}
	return orNone(parts)
}

func vectorFields(fs []capability.VectorField) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = fmt.Sprintf("%s(%d,%s%s,indexed=%t%s)", f.Name, f.Dims, f.Similarity, element(f), f.Indexed, quantisation(f))
	}
	return orNone(parts)
}

// element names a field's element type when it is not float ("" then).
func element(f capability.VectorField) string {
	if el := f.Element.OrFloat(); el != capability.ElementFloat {
		return "," + string(el)
	}
	return ""
}

// quantisation names a quantised field's compression and whether its
// scores are rescored (exact) or approximate; "" for a field scored on
// its original vectors.
func quantisation(f capability.VectorField) string {
	q := f.Detail["quantisation"]
	switch {
	case f.ApproxScores && q != "":
		return ",quantised=" + q + ",approximate scores"
	case f.ApproxScores:
		return ",approximate scores"
	case q != "":
		return ",quantised=" + q + "," + f.Detail["scores"]
	}
	return ""
}

func filterFields(fs []capability.FilterField) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.Name + ":" + string(f.Type)
		if f.Precision.Stored != "" {
			parts[i] += "(" + f.Precision.String() + ")"
		}
	}
	return orNone(parts)
}

func orNone(parts []string) string {
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}
