package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// golden compares got with testdata/name.golden, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (go test -update rewrites it)\n--- got:\n%s\n--- want:\n%s", name, path, got, want)
	}
}

// result is one run of the CLI.
type result struct {
	code     int
	out, err string
}

// runCLI runs the CLI in-process with the given stdin.
func runCLI(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := runWithInput(context.Background(), append([]string{"toolcage"}, args...), strings.NewReader(stdin), &out, &errb)
	return result{code: code, out: out.String(), err: errb.String()}
}

// noSocket is a socket path where nothing listens.
func noSocket(t *testing.T) string {
	return filepath.Join(t.TempDir(), "none.sock")
}

// seen is one request the fake daemon received.
type seen struct {
	Method, Path, Query string
	Body                string
	CallerType          string
}

// fakeDaemon serves handler on a Unix socket and records every request.
type fakeDaemon struct {
	socket string
	mu     sync.Mutex
	reqs   []seen
}

func (f *fakeDaemon) requests() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.reqs...)
}

func newFakeDaemon(t *testing.T, mux *http.ServeMux) *fakeDaemon {
	t.Helper()
	// Unix socket paths are short; t.TempDir() can be too long.
	dir, err := os.MkdirTemp("", "tc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	f := &fakeDaemon{socket: filepath.Join(dir, "d.sock")}
	ln, err := net.Listen("unix", f.socket)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, seen{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Body: string(b), CallerType: r.Header.Get("Toolcage-Caller-Type")})
		f.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		mux.ServeHTTP(w, r)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return f
}

// reply answers with status and a JSON body.
func reply(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// errorReply answers like the daemon's writeError.
func errorReply(status int, code, msg string) http.HandlerFunc {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code, "message": msg}})
	return reply(status, string(b)+"\n")
}
