package standby

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"time"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/jsonrpc"
)

// Drain configures a graceful shutdown: requests in flight get Grace to
// finish; then Abort is called (it should end engine calls with -32010),
// and Settle later whatever is still running is cancelled.
type Drain struct {
	Grace, Settle time.Duration
	Abort         func()
	// Closed, when set, is told how many HTTP connections were still open
	// when the drain ran out and closed them (a client holding a request
	// past the grace period). The shutdown still counts as graceful.
	Closed func(conns int)
}

// DefaultSettle is the time between Abort and the hard stop.
const DefaultSettle = 2 * time.Second

func (d Drain) withDefaults() Drain {
	if d.Settle <= 0 {
		d.Settle = DefaultSettle
	}
	if d.Abort == nil {
		d.Abort = func() {}
	}
	return d
}

// wait returns the first error from errc within the drain's phases:
// grace, then Abort and settle, then cancel and whatever errc yields.
func (d Drain) wait(errc <-chan error, cancel func()) error {
	d = d.withDefaults()
	for _, phase := range []struct {
		after time.Duration
		then  func()
	}{{d.Grace, d.Abort}, {d.Settle, cancel}} {
		t := time.NewTimer(phase.after)
		select {
		case err := <-errc:
			t.Stop()
			return err
		case <-t.C:
		}
		phase.then()
	}
	return <-errc
}

// pendingLine is one input line read before the handover.
type pendingLine struct {
	data    []byte
	tooLong bool
}

// ServeStdio serves NDJSON (§5.1): Pending answers until Open, then the
// real server on the rest of the stream, starting with the first line
// read after Open. A shutdown answered while pending, or EOF, ends it.
// When ctx ends it drains: input is closed as at EOF so no new request is
// read (§13.1), requests in flight are answered within d.
func (g *Gate) ServeStdio(ctx context.Context, in io.Reader, out io.Writer, d Drain) error {
	lines, handoff := make(chan pendingLine), make(chan bool)
	pr, pw := io.Pipe()
	done := make(chan struct{})
	defer close(done)
	go pump(in, lines, handoff, pw, done)
	for {
		var l pendingLine
		var ok bool
		select {
		case <-ctx.Done():
			pw.Close()
			return nil
		case l, ok = <-lines:
		}
		switch {
		case !ok:
			return nil // EOF: implicit shutdown (§7.12)
		case g.Ready() && g.stdio.Load() != nil && !l.tooLong:
			handoff <- true
			return g.serveReady(ctx, pr, pw, out, d)
		}
		handoff <- false
		if stop, err := g.answerPending(l, out); stop || err != nil {
			pw.Close()
			return err
		}
	}
}

func (g *Gate) answerPending(l pendingLine, out io.Writer) (bool, error) {
	var frame []byte
	var shutdown bool
	if l.tooLong {
		frame = errorFrame(jsonrpc.NullID, rcp.NewError(rcp.CodePayloadTooLarge, "frame exceeds %d bytes", maxPendingBody))
	} else {
		frame, shutdown = g.Pending(l.data)
	}
	if frame == nil {
		return shutdown, nil
	}
	_, err := out.Write(append(frame, '\n'))
	return shutdown, err
}

// serveReady runs the real server on the rest of the input and drains it
// when ctx ends.
func (g *Gate) serveReady(ctx context.Context, pr *io.PipeReader, pw *io.PipeWriter, out io.Writer, d Drain) error {
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	defer pr.Close()
	errc := make(chan error, 1)
	serve := *g.stdio.Load()
	go func() { errc <- serve(sctx, pr, out) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	pw.Close() // the server sees EOF: it reads nothing more and answers what it has
	err := d.wait(errc, cancel)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// pump reads lines for the pending phase; once told to hand over, it
// forwards that line and then the raw rest of in through pw.
func pump(in io.Reader, lines chan<- pendingLine, handoff <-chan bool, pw *io.PipeWriter, done <-chan struct{}) {
	defer close(lines)
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		l, err := readLine(br)
		if len(bytes.TrimSpace(l.data)) > 0 || l.tooLong {
			select {
			case lines <- l:
			case <-done:
				return
			}
			if <-handoff {
				forward(append(l.data, '\n'), br, pw)
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func forward(first []byte, br *bufio.Reader, pw *io.PipeWriter) {
	if _, err := pw.Write(first); err != nil {
		return
	}
	_, err := io.Copy(pw, br)
	pw.CloseWithError(err) // nil: EOF for the server
}

// readLine reads one line of at most maxPendingBody bytes; a longer line
// is discarded and reported as tooLong.
func readLine(br *bufio.Reader) (pendingLine, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > maxPendingBody {
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
			}
			return pendingLine{tooLong: true}, err
		}
		buf = append(buf, chunk...)
		if err != bufio.ErrBufferFull {
			return pendingLine{data: bytes.TrimRight(buf, "\r\n")}, err
		}
	}
}
