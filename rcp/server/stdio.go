package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"sync"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/jsonrpc"
)

// errTransport is the cancel cause of in-flight requests when the output
// stream fails (§13.1 transport death).
var errTransport = errors.New("rcp: transport closed")

// ServeStdio serves one session over NDJSON (§5.1): one frame per line,
// blank lines ignored, requests processed concurrently and answered by id
// (except that a frame carrying initialize is answered before the next line
// is read),
// writes serialised, out carrying frames only. It returns nil after EOF on
// in or after answering shutdown, once in-flight requests have been
// answered (§7.12, §13.1); it returns ctx's error if ctx ends first and the
// write error if out fails. After shutdown a goroutine may remain blocked
// reading in until it yields data or EOF; it then exits.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, cancelAll := context.WithCancelCause(ctx)
	defer cancelAll(errTransport)
	sess := newSession(s)
	w := &lineWriter{w: out, onErr: func(err error) { cancelAll(errors.Join(errTransport, err)) }}
	done := make(chan struct{})
	defer close(done)
	lines := make(chan line)
	go readLines(in, s.opts.MaxLineBytes, lines, done)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			if err := w.error(); err != nil {
				return err
			}
			return context.Cause(ctx)
		case l, ok := <-lines:
			if !ok {
				return nil // EOF: implicit shutdown once in-flight work is answered
			}
			s.serveLine(ctx, sess, l, w, &wg)
			if sess.closing.Load() {
				return nil
			}
		}
	}
}

func (s *Server) serveLine(ctx context.Context, sess *session, l line, w *lineWriter, wg *sync.WaitGroup) {
	if l.tooLong {
		w.write(errorFrame(jsonrpc.NullID, rcp.NewError(rcp.CodePayloadTooLarge, "frame exceeds %d bytes", s.opts.MaxLineBytes)))
		return
	}
	if len(bytes.TrimSpace(l.data)) == 0 {
		return // §5.1 blank lines are tolerated
	}
	j := sess.accept(ctx, l.data, w.write, "")
	answer := func() {
		if b := j.run(); b != nil {
			w.write(b)
			jsonrpc.ReleaseFrame(b)
		}
	}
	if j.initializes() {
		// §13: a frame carrying initialize completes before the next line
		// is read, so a request pipelined right behind it is gated against
		// the negotiated session rather than answered -32001.
		answer()
		return
	}
	wg.Go(answer)
}

// line is one input line, or a marker that a line exceeded the limit.
type line struct {
	data    []byte
	tooLong bool
}

// readLines splits in into lines of at most max bytes; longer lines are
// discarded and reported as tooLong so the session keeps going.
func readLines(in io.Reader, max int, out chan<- line, done <-chan struct{}) {
	defer close(out)
	r := bufio.NewReaderSize(in, 64<<10)
	first := true
	for {
		l, err := readLine(r, max)
		if first {
			l.data, first = bytes.TrimPrefix(l.data, []byte("\xef\xbb\xbf")), false
		}
		if len(l.data) > 0 || l.tooLong {
			select {
			case out <- l:
			case <-done:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func readLine(r *bufio.Reader, max int) (line, error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(buf)+len(chunk) > max+1 {
			buf, chunk = nil, nil
			if err == bufio.ErrBufferFull {
				err = discardLine(r)
			}
			return line{tooLong: true}, err
		}
		buf = append(buf, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		return line{data: bytes.TrimRight(buf, "\r\n")}, err
	}
}

func discardLine(r *bufio.Reader) error {
	for {
		_, err := r.ReadSlice('\n')
		if err != bufio.ErrBufferFull {
			return err
		}
	}
}

// lineWriter serialises frames onto out, one Write per frame.
type lineWriter struct {
	mu    sync.Mutex
	w     io.Writer
	err   error
	onErr func(error)
}

func (lw *lineWriter) write(frame []byte) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.err != nil {
		return
	}
	if _, err := lw.w.Write(append(frame, '\n')); err != nil {
		lw.err = err
		lw.onErr(err)
	}
}

func (lw *lineWriter) error() error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.err
}
