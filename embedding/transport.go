package embedding

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"
	"unsafe"

	"github.com/rcp-sidecar/rcp-sidecar/capability"
	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/retry"
)

// maxResponseBytes bounds one upstream response body (64 MiB).
const maxResponseBytes = 64 << 20

type embedRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	// EmbeddingTypes is Cohere's name for the same request, sent beside
	// encoding_format for int8 (servers ignore the field they do not use).
	EmbeddingTypes []string `json:"embedding_types,omitempty"`
	InputType      string   `json:"input_type,omitempty"`
}

type embedResponse struct {
	Data []embedItem `json:"data"`
}

// embedItem is one vector of an answer, placed by its index when the
// server sends one.
type embedItem struct {
	Index     *int       `json:"index"`
	Embedding vectorJSON `json:"embedding"`
}

// numbers is a JSON array of numbers. encoding/json decodes a []float64
// element by element through reflection, which cost more than a tenth of
// a dense retrieve's CPU for one 384-dimension vector; json.Unmarshal has
// already checked that the document is valid JSON when UnmarshalJSON
// runs, so the array is split at its commas and each element parsed
// directly. Any element that is not a number is an error.
type numbers []float64

// UnmarshalJSON implements json.Unmarshaler.
func (n *numbers) UnmarshalJSON(b []byte) error {
	b = trimJSONSpace(b)
	if string(b) == "null" {
		*n = nil
		return nil
	}
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return errors.New("embedding is not an array")
	}
	body := trimJSONSpace(b[1 : len(b)-1])
	if len(body) == 0 {
		*n = numbers{}
		return nil
	}
	out := make(numbers, 0, bytes.Count(body, []byte{','})+1)
	for len(body) > 0 {
		tok := body
		if i := bytes.IndexByte(body, ','); i >= 0 {
			tok, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		tok = trimJSONSpace(tok)
		// Every element that is not a number starts with something other
		// than '-' or a digit, and so does the first piece of one that
		// holds a comma (a string, array or object): it is refused before
		// any of its pieces could be read as a number.
		if len(tok) == 0 || (tok[0] != '-' && (tok[0] < '0' || tok[0] > '9')) {
			return fmt.Errorf("embedding element %d is not a number", len(out))
		}
		f, err := strconv.ParseFloat(unsafe.String(&tok[0], len(tok)), 64)
		if err != nil {
			return fmt.Errorf("embedding element %d: %w", len(out), err)
		}
		out = append(out, f)
	}
	*n = out
	return nil
}

// trimJSONSpace trims JSON's four whitespace bytes from both ends.
func trimJSONSpace(b []byte) []byte { return bytes.Trim(b, " \t\n\r") }

// embedBatch sends one batch. Until the server has answered a base64
// request, one it refuses as a bad request is sent again asking for
// floats; when that one is answered, every later request asks for
// floats. A server known to answer base64 gets no second request: its
// 400 is about the batch.
func (o *OpenAI) embedBatch(ctx context.Context, texts []string, kind string) ([][]float32, error) {
	format := o.requestFormat()
	vecs, status, err := o.send(ctx, texts, kind, format)
	if format != FormatBase64 {
		return vecs, err
	}
	state := o.format.Load()
	switch {
	case err == nil:
		if state == formatUnknown {
			o.format.CompareAndSwap(formatUnknown, formatBase64)
		}
		return vecs, nil
	case state != formatUnknown || (status != http.StatusBadRequest && status != http.StatusUnprocessableEntity):
		return nil, err
	}
	if vecs, _, err = o.send(ctx, texts, kind, FormatFloat); err != nil {
		return nil, err
	}
	o.format.CompareAndSwap(formatUnknown, formatFloats)
	return vecs, nil
}

// requestFormat is the encoding_format of the next request.
func (o *OpenAI) requestFormat() string {
	switch {
	case o.opts.Element == capability.ElementInt8:
		return "int8"
	case o.format.Load() == formatFloats:
		return FormatFloat
	}
	return o.opts.EncodingFormat
}

// send sends one batch asking for format, retrying transient failures
// with the module's backoff (retry). status is the last answer's HTTP
// status (0 without one).
func (o *OpenAI) send(ctx context.Context, texts []string, kind, format string) ([][]float32, int, error) {
	body, err := o.requestBody(texts, kind, format)
	if err != nil {
		return nil, 0, err
	}
	var vecs [][]float32
	var last *rcp.Error
	status := 0
	p := retry.Policy{
		MaxAttempts: o.opts.MaxRetries + 1,
		Base:        o.opts.BackoffBase,
		Max:         o.opts.BackoffMax,
		Retryable:   func(error) bool { return last.AdvisesRetry() },
		Hint:        func(error) time.Duration { return last.RetryAfter() },
	}
	rerr := retry.Do(ctx, p, func(ctx context.Context, _ int) error {
		vecs, status, last = o.attempt(ctx, body, len(texts), format)
		if last == nil {
			return nil
		}
		return last
	})
	if rerr == nil {
		return vecs, status, nil
	}
	if cerr := ctx.Err(); cerr != nil && last.AdvisesRetry() {
		// Cancelled or timed out while waiting to retry.
		return nil, status, classifyTransport(cerr)
	}
	return nil, status, last
}

func (o *OpenAI) requestBody(texts []string, kind, format string) ([]byte, error) {
	req := embedRequest{Model: o.opts.Model, Input: texts, EncodingFormat: format}
	if format == "int8" {
		req.EmbeddingTypes = []string{"int8"}
	}
	if o.opts.SendInputType {
		req.InputType = kind
	}
	return req.appendJSON(nil), nil
}

// appendJSON appends r as json.Marshal writes it, without reflection:
// every dense query sends one.
func (r *embedRequest) appendJSON(b []byte) []byte {
	n := 64 + len(r.Model)
	for _, t := range r.Input {
		n += len(t) + 3
	}
	b = slices.Grow(b, n)
	b = rcp.AppendString(append(b, `{"model":`...), r.Model)
	b = rcp.AppendStrings(append(b, `,"input":`...), r.Input)
	b = rcp.AppendString(append(b, `,"encoding_format":`...), r.EncodingFormat)
	if len(r.EmbeddingTypes) > 0 {
		b = rcp.AppendStrings(append(b, `,"embedding_types":`...), r.EmbeddingTypes)
	}
	if r.InputType != "" {
		b = rcp.AppendString(append(b, `,"input_type":`...), r.InputType)
	}
	return append(b, '}')
}

// attempt performs one HTTP round trip and validates the answer; status
// is the answer's HTTP status (0 without an answer).
func (o *OpenAI) attempt(ctx context.Context, body []byte, n int, format string) ([][]float32, int, *rcp.Error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, 0, rcp.AsError(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if o.opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.opts.APIKey)
	}
	resp, err := o.client.Do(req)
	if err != nil {
		return nil, 0, classifyTransport(ctxErrOr(ctx, err))
	}
	defer resp.Body.Close()
	raw, err := readBody(resp.Body, resp.ContentLength, o.answerSize(n, format))
	if err != nil {
		return nil, resp.StatusCode, classifyTransport(ctxErrOr(ctx, err))
	}
	if resp.StatusCode/100 != 2 {
		ra := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		return nil, resp.StatusCode, statusError(resp.StatusCode, ra, snippet(o.scrub(raw)))
	}
	vecs, rerr := o.decode(raw, n)
	return vecs, resp.StatusCode, rerr
}

// maxSizeHint caps the buffer readBody allocates before any byte arrives.
const maxSizeHint = 1 << 20

// readBody reads at most maxResponseBytes of body (as io.ReadAll of an
// io.LimitReader does) into one buffer sized for the answer expected:
// contentLength when the server sent one, else hint; either at most
// maxSizeHint, so a server announcing more gets a buffer that grows only
// as it sends. io.ReadAll grows from 512 bytes: a 384-float answer took
// six allocations and copies.
func readBody(body io.Reader, contentLength int64, hint int) ([]byte, error) {
	if contentLength >= 0 {
		hint = int(min(contentLength, maxSizeHint))
	}
	buf := bytes.NewBuffer(make([]byte, 0, min(hint, maxSizeHint)+bytes.MinRead))
	_, err := buf.ReadFrom(io.LimitReader(body, maxResponseBytes))
	return buf.Bytes(), err
}

// answerSize estimates the bytes of an answer to n inputs asked for in
// format: about 16 a component (a float32 written shortest and its
// comma) or, in base64, 6 (four bytes as 5⅓ characters), and 256 an
// item.
func (o *OpenAI) answerSize(n int, format string) int {
	dim := o.Dimension()
	if dim == 0 {
		dim = 1024
	}
	per := 16*dim + 256
	if format == FormatBase64 {
		per = 6*dim + 256
	}
	if n > maxSizeHint/per {
		return maxSizeHint
	}
	return n * per
}

// ctxErrOr prefers the context's error, so a deadline reads as a timeout
// rather than as the transport error it caused.
func ctxErrOr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return err
}

// scrub removes the embedder's own API key from an upstream body (some
// gateways echo the request's Authorization header in their errors). It
// runs before snippet cuts the body, so no prefix of the key survives at
// the cut either.
func (o *OpenAI) scrub(b []byte) []byte {
	if len(o.opts.APIKey) < 4 { // shorter keys would mangle any text
		return b
	}
	return bytes.ReplaceAll(b, []byte(o.opts.APIKey), []byte("[redacted]"))
}

// snippet keeps the start of an upstream body for logs.
func snippet(b []byte) string {
	const n = 256
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// decode parses the response and places each vector by its index field.
func (o *OpenAI) decode(raw []byte, n int) ([][]float32, *rcp.Error) {
	r, ok := readResponse(raw, o.Dimension())
	if !ok {
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, badResponse(fmt.Errorf("decode: %w", err))
		}
	}
	if len(r.Data) != n {
		return nil, badResponse(fmt.Errorf("got %d embeddings for %d inputs", len(r.Data), n))
	}
	out := make([][]float32, n)
	for pos, d := range r.Data {
		i := pos
		if d.Index != nil {
			i = *d.Index
		}
		if i < 0 || i >= n || out[i] != nil {
			return nil, badResponse(fmt.Errorf("embedding index %d out of range or repeated", i))
		}
		if d.Embedding.packed && o.opts.Element == capability.ElementInt8 {
			return nil, badResponse(fmt.Errorf("embedding %d is a base64 string, not the int8 array asked for", i))
		}
		v, err := o.vector(i, d.Embedding.values)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// vector converts one embedding, enforcing the dimension, finiteness
// and, for int8, that every value is an integer in [-128, 127] (checked
// on the value as sent, before any rounding to float32).
func (o *OpenAI) vector(i int, f []float64) ([]float32, *rcp.Error) {
	if err := o.checkDim(i, len(f)); err != nil {
		return nil, err
	}
	int8s := o.opts.Element == capability.ElementInt8
	v := make([]float32, len(f))
	for j, x := range f {
		v[j] = float32(x)
		switch {
		case int8s && (x != math.Trunc(x) || x < -128 || x > 127):
			return nil, badResponse(fmt.Errorf("embedding %d has %g at %d, not an int8 integer in [-128, 127]: the server did not answer the int8 request", i, x, j))
		case math.IsNaN(float64(v[j])) || math.IsInf(float64(v[j]), 0):
			return nil, badResponse(fmt.Errorf("embedding %d has a non-finite value at %d", i, j))
		}
	}
	return v, nil
}

// checkDim compares got with the dimension, learning it on first use.
func (o *OpenAI) checkDim(i, got int) *rcp.Error {
	if got == 0 {
		return badResponse(errors.New("empty embedding"))
	}
	o.dim.CompareAndSwap(0, int64(got))
	if want := o.Dimension(); got != want {
		return dimError(&DimensionError{Index: i, Want: want, Got: got})
	}
	return nil
}

func dimError(d *DimensionError) *rcp.Error {
	e := rcp.NewError(rcp.CodeInternalError, "embedding dimension mismatch")
	e.Data = &rcp.ErrorData{Retryable: new(false), Detail: d.Error()}
	return e.WithCause(d)
}
