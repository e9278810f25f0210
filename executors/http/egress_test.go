package httpexec_test

import (
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	httpexec "github.com/toolcage/toolcage/executors/http"
)

// socketProxy is a stand-in for the daemon's egress proxy on a Unix
// socket: it answers the request it is sent in absolute form, redirecting
// /start to /final and refusing /denied with the proxy's error header, and
// records each request's URL and token.
func socketProxy(t *testing.T) (addr string, seen func() []string) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "egress.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		got []string
	)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.String()+" "+r.Header.Get(executors.EgressTokenHeader))
		mu.Unlock()
		switch r.URL.Path {
		case "/start":
			http.Redirect(w, r, "/final", http.StatusFound)
		case "/denied":
			w.Header().Set(executors.EgressErrorHeader, "policy_denied: not on the allowlist")
			w.WriteHeader(http.StatusForbidden)
		default:
			w.Write([]byte(`{"at":"` + r.URL.Path + `"}`))
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return executors.EgressUnixPrefix + sock, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

// With a unix: egress address every request of the call, the redirect
// included, goes to the socket: the API's host (one that resolves nowhere)
// is never dialled, so an executor without any network can make the call.
func TestEgressOverUnixSocket(t *testing.T) {
	addr, seen := socketProxy(t)
	e := httpexec.New(httpexec.Config{})
	mk := func(path string) *executors.Request {
		return &executors.Request{Tool: "t", Kind: executors.KindHTTP, HTTP: &executors.HTTPCall{
			Method: "GET", URL: "http://api.toolcage.invalid" + path, AllowedDomains: []string{"api.toolcage.invalid"},
			Egress: &executors.Egress{Addr: addr, Token: "tok1"}}}
	}
	res, err := execute(t, e, mk("/start"))
	r := mustOK(t, res, err)
	if r.Status != 200 || string(r.Body) != `{"at":"/final"}` {
		t.Fatalf("result %+v", r)
	}
	want := []string{"http://api.toolcage.invalid/start tok1", "http://api.toolcage.invalid/final tok1"}
	if got := seen(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the socket got %q, want %q", got, want)
	}
	_, err = execute(t, e, mk("/denied"))
	wantCode(t, err, errdefs.PolicyDenied, "")
	if !strings.Contains(err.Error(), "not on the allowlist") {
		t.Fatalf("refusal %v does not carry the proxy's reason", err)
	}
	// A socket that is not there is the call's failure, not a panic.
	bad := mk("/start")
	bad.HTTP.Egress.Addr = executors.EgressUnixPrefix + filepath.Join(t.TempDir(), "none.sock")
	res, err = execute(t, e, bad)
	if err != nil || !res.IsError || !strings.Contains(res.Error, "egress proxy") {
		t.Fatalf("missing socket: %v %+v", err, res)
	}
}
