package retrieval

import (
	"context"
	"fmt"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rankmath"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// MaxIDBytes bounds document ids accepted by index/add and index/delete.
const MaxIDBytes = 512

// Embed serves §7.3: one vector per input, in order. inputs (or the legacy
// texts) are bare strings or text blocks; other blocks are -32005 on a
// text-only server (§4.8). More inputs than embed.batchLimit is -32013: the
// request exceeds an advertised limit that cannot be clamped, and §12 names
// the inputs count as a PayloadTooLarge case (§15.5 enforcement).
func (e *Engine) Embed(ctx context.Context, p *rcp.EmbedParams) (*rcp.EmbedResult, error) {
	if e.caps.Embed == nil || e.opts.Embedder == nil {
		return nil, rcp.NewError(rcp.CodeCapabilityMissing, "embed is not advertised")
	}
	texts, rerr := e.embedInputs(p)
	if rerr != nil {
		return nil, rerr
	}
	f32, rerr := e.embedEncoding(p.Encoding)
	if rerr != nil {
		return nil, rerr
	}
	if p.Kind != "" && p.Kind != "query" && p.Kind != "document" {
		return nil, rcp.InvalidParams("kind", "kind must be \"query\" or \"document\"")
	}
	vs, err := e.embedAll(ctx, texts, p.Kind)
	if err != nil {
		return nil, e.wrap(ctx, err)
	}
	rcp.ReporterFrom(ctx).Log("debug", "embed", fmt.Sprintf("embed inputs=%d dimension=%d", len(vs), e.policy.EmbedDim), nil)
	return e.embedResult(vs, f32), nil
}

func (e *Engine) embedInputs(p *rcp.EmbedParams) ([]string, *rcp.Error) {
	inputs, field := p.Inputs, "inputs"
	if len(inputs) == 0 && len(p.Texts) > 0 {
		inputs, field = p.Texts, "texts"
	}
	if len(inputs) == 0 {
		return nil, rcp.InvalidParams("inputs", "inputs must be a non-empty array")
	}
	if lim := e.caps.Embed.BatchLimit; lim > 0 && len(inputs) > lim {
		err := rcp.NewError(rcp.CodePayloadTooLarge, "%d inputs exceed embed.batchLimit %d", len(inputs), lim)
		err.Data = &rcp.ErrorData{Field: field}
		return nil, err
	}
	texts := make([]string, len(inputs))
	for i, in := range inputs {
		if !in.IsSet() || len(in.Blocks) == 0 {
			return nil, rcp.InvalidParams(fmt.Sprintf("%s[%d]", field, i), "%s[%d] must be a string or a content block", field, i)
		}
		for j, b := range in.Blocks {
			if b.Type == "" {
				return nil, rcp.InvalidParams(blockField(fmt.Sprintf("%s[%d]", field, i), j, len(in.Blocks)), "a content block needs a type (§4.8)")
			}
		}
		t, ok := in.Text()
		if !ok {
			typ := firstNonText(in.Blocks)
			return nil, rcp.OptionUnsupported(typ, "%s[%d]: content block type %q is not supported", field, i, typ)
		}
		texts[i] = t
	}
	return texts, nil
}

func firstNonText(bs []rcp.Content) string {
	for _, b := range bs {
		if b.Type != "text" {
			return b.Type
		}
	}
	return "text"
}

func (e *Engine) embedEncoding(enc string) (bool, *rcp.Error) {
	switch {
	case enc == "" || enc == "json":
		return false, nil
	case e.hasEncoding(enc):
		return enc == "f32-base64", nil
	}
	return false, rcp.OptionUnsupported(enc, "encoding %q is not advertised", enc)
}

// embedAll embeds texts in batches of at most the advertised batch limit
// and checks that the embedder kept its dimension contract.
func (e *Engine) embedAll(ctx context.Context, texts []string, kind string) (_ [][]float32, err error) {
	ctx, span := startStage(ctx, "embed", attribute.Int("rcp.inputs", len(texts)), attribute.String("rcp.kind", kind))
	defer func() { endStage(span, err) }()
	lim := max(e.policy.EmbedBatchLimit, 1)
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += lim {
		batch := texts[start:min(start+lim, len(texts))]
		var vs [][]float32
		inStage(ctx, "embed", func(ctx context.Context) { vs, err = e.opts.Embedder.Embed(ctx, batch, kind) })
		if err != nil {
			return nil, err
		}
		if err := checkVectors(vs, len(batch), e.policy); err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

// checkVectors holds the embedder to its contract: n vectors of the
// policy's dimension whose components are values of its element type (an
// engine would refuse anything else in a request the sidecar built).
func checkVectors(vs [][]float32, n int, p capability.Policy) error {
	if len(vs) != n {
		return fmt.Errorf("embedder returned %d vectors for %d inputs", len(vs), n)
	}
	for _, v := range vs {
		if len(v) != p.EmbedDim {
			return fmt.Errorf("embedder returned a %d-d vector, want %d", len(v), p.EmbedDim)
		}
		if err := adapters.CheckElements(v, p.EmbedElement.OrFloat()); err != nil {
			return fmt.Errorf("embedder returned a vector that is not %s: %w", p.EmbedElement.OrFloat(), err)
		}
	}
	return nil
}

func (e *Engine) embedResult(vs [][]float32, f32 bool) *rcp.EmbedResult {
	res := &rcp.EmbedResult{Vectors: vs, Encoding: "json", Dimension: e.policy.EmbedDim}
	if f32 {
		enc := make([]string, len(vs))
		for i, v := range vs {
			enc[i] = rankmath.EncodeF32(v)
		}
		res.Vectors, res.Encoding = enc, "f32-base64"
	}
	return res
}

// IndexAdd upserts documents (§7.10): ids come back positionally, missing
// ids are minted, and the embedder fills vectors when dense is served.
// Meta is stored in its canonical spelling (filterlang.CanonicalMeta) and may
// not set the fields the sidecar writes itself; a tenant's write is held
// to the tenancy policy (Tenancy.MetaFields, Tenancy.MaxNewFields).
func (e *Engine) IndexAdd(ctx context.Context, p *rcp.IndexAddParams) (*rcp.IndexAddResult, error) {
	w, rerr := e.writer()
	if rerr != nil {
		return nil, rerr
	}
	if rerr := e.gateIndexAdd(p); rerr != nil {
		return nil, rerr
	}
	tenant, rerr := e.tenantOf(ctx, true)
	if rerr != nil {
		return nil, rerr
	}
	docs, rerr := toDocuments(p.Documents)
	if rerr != nil {
		return nil, rerr
	}
	if rerr := e.canonicalMeta(docs); rerr != nil {
		return nil, rerr
	}
	if t, scoped := adapters.TenantFrom(ctx); scoped {
		if rerr := e.checkTenantMeta(t, tenant, docs); rerr != nil {
			return nil, rerr
		}
	}
	if err := e.embedDocuments(ctx, docs); err != nil {
		return nil, e.wrap(ctx, err)
	}
	if err := w.Upsert(ctx, docs); err != nil {
		return nil, e.wrap(ctx, err)
	}
	e.known.learn(tenant, docs)
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	rcp.ReporterFrom(ctx).Log("debug", "index", fmt.Sprintf("index/add documents=%d", len(ids)), nil)
	return &rcp.IndexAddResult{IDs: ids}, nil
}

func (e *Engine) writer() (adapters.Writer, *rcp.Error) {
	w, ok := e.a.(adapters.Writer)
	if e.caps.Index == nil || !e.caps.Index.Writable || !ok {
		return nil, rcp.NewError(rcp.CodeCapabilityMissing, "index is not advertised as writable")
	}
	return w, nil
}

// gateIndexAdd: server-side chunking and contextual retrieval are not
// advertised (index.chunking/contextual absent), so asking is -32005.
func (e *Engine) gateIndexAdd(p *rcp.IndexAddParams) *rcp.Error {
	if p.Chunk != nil && *p.Chunk {
		return rcp.OptionUnsupported("chunk", "server-side chunking is not advertised")
	}
	if p.Contextual != nil && *p.Contextual {
		return rcp.OptionUnsupported("contextual", "contextual chunking is not advertised")
	}
	return nil
}

func toDocuments(in []rcp.Document) ([]adapters.Document, *rcp.Error) {
	docs := make([]adapters.Document, len(in))
	for i, d := range in {
		id := d.ID
		if id == "" {
			id = adapters.MintID()
		} else if err := checkID(id, fmt.Sprintf("documents[%d].id", i)); err != nil {
			return nil, err
		}
		docs[i] = adapters.Document{ID: id, Text: d.Text, Meta: d.Meta}
	}
	return docs, nil
}

func checkID(id, field string) *rcp.Error {
	if id == "" || len(id) > MaxIDBytes || !utf8.ValidString(id) {
		return rcp.InvalidParams(field, "id must be a non-empty UTF-8 string of at most %d bytes", MaxIDBytes)
	}
	return nil
}

// embedDocuments fills vectors (kind "document") when dense retrieval is
// served through the sidecar's embedder.
func (e *Engine) embedDocuments(ctx context.Context, docs []adapters.Document) error {
	if !e.embedsDocuments() || len(docs) == 0 {
		return nil
	}
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = d.Text
	}
	vs, err := e.embedAll(ctx, texts, "document")
	if err != nil {
		return err
	}
	for i := range docs {
		docs[i].Vector, docs[i].VectorField = vs[i], e.dense.Name
	}
	return nil
}

// embedsDocuments reports whether index/add fills document vectors.
func (e *Engine) embedsDocuments() bool {
	return e.dense != nil && e.opts.Embedder != nil && !e.ev.QueryInference
}

// IndexDelete removes ids (§7.11): idempotent, counting only documents
// actually removed by this call.
func (e *Engine) IndexDelete(ctx context.Context, p *rcp.IndexDeleteParams) (*rcp.IndexDeleteResult, error) {
	w, rerr := e.writer()
	if rerr != nil {
		return nil, rerr
	}
	if _, rerr := e.tenantOf(ctx, true); rerr != nil {
		return nil, rerr
	}
	for i, id := range p.IDs {
		if err := checkID(id, fmt.Sprintf("ids[%d]", i)); err != nil {
			return nil, err
		}
	}
	if len(p.IDs) == 0 {
		return &rcp.IndexDeleteResult{}, nil
	}
	n, err := w.Delete(ctx, p.IDs)
	if err != nil {
		return nil, e.wrap(ctx, err)
	}
	rcp.ReporterFrom(ctx).Log("debug", "index", fmt.Sprintf("index/delete ids=%d deleted=%d", len(p.IDs), n), nil)
	return &rcp.IndexDeleteResult{Deleted: n}, nil
}
