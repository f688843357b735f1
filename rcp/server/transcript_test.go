package server_test

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"golang.org/x/tools/txtar"

	"github.com/rcp-sidecar/rcp-sidecar/rcp/rcptest"
	"github.com/rcp-sidecar/rcp-sidecar/rcp/server"
)

var update = flag.Bool("update", false, "rewrite the server sections of testdata/transcripts")

// TestTranscripts replays each testdata/transcripts/*.txtar: the lines of
// its "client" section are sent one at a time to a stdio server over an
// in-memory pipe inside a synctest bubble, and everything the server
// writes must equal the "server" section and validate against rcp-1.0.json.
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/transcripts/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			client, want := section(ar, "client"), section(ar, "server")
			got := replay(t, client)
			for _, l := range strings.Split(strings.TrimSpace(got), "\n") {
				if err := rcptest.ValidateFrame([]byte(l)); l != "" && err != nil {
					t.Errorf("frame violates rcp-1.0.json: %v\n%s", err, l)
				}
			}
			if *update {
				setSection(ar, "server", got)
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != want {
				t.Errorf("server frames differ\n--- got\n%s--- want\n%s", got, want)
			}
		})
	}
}

// replay runs the client lines through a fresh server and returns the
// server's output. synctest.Wait after each line lets the server finish
// everything that line caused, so the output order is deterministic.
func replay(t *testing.T, client string) string {
	var out bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		srv := server.New(rcptest.NewStubBackend(3), server.Options{})
		go func() {
			if err := srv.ServeStdio(context.Background(), inR, outW); err != nil {
				t.Errorf("ServeStdio: %v", err)
			}
			outW.Close()
			inR.Close()
		}()
		var mu sync.Mutex
		done := make(chan struct{})
		go func() {
			defer close(done)
			sc := bufio.NewScanner(outR)
			for sc.Scan() {
				mu.Lock()
				out.Write(append(sc.Bytes(), '\n'))
				mu.Unlock()
			}
		}()
		for _, l := range strings.Split(client, "\n") {
			if strings.TrimSpace(l) == "" {
				continue
			}
			if _, err := io.WriteString(inW, l+"\n"); err != nil {
				break // the server stopped reading (shutdown)
			}
			synctest.Wait()
		}
		inW.Close()
		<-done
	})
	return out.String()
}

func section(ar *txtar.Archive, name string) string {
	for _, f := range ar.Files {
		if f.Name == name {
			return string(f.Data)
		}
	}
	return ""
}

func setSection(ar *txtar.Archive, name, data string) {
	for i := range ar.Files {
		if ar.Files[i].Name == name {
			ar.Files[i].Data = []byte(data)
			return
		}
	}
	ar.Files = append(ar.Files, txtar.File{Name: name, Data: []byte(data)})
}
