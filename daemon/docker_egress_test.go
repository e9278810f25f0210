package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/executors/host"
	"github.com/toolcage/toolcage/executors/image/imagetest"
)

// egressAPI is a real API on 127.0.0.1 for the egress tests: /v1 echoes
// the key it got (header and query) back, in its body and a header;
// /redirect sends the caller on to /v1/landed; /slow answers only when
// its request ends. It records every request as "path key-header
// key-query".
type egressAPI struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
	slow chan struct{} // a /slow request has arrived
}

func newEgressAPI(t *testing.T) *egressAPI {
	a := &egressAPI{slow: make(chan struct{}, 4)}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("X-Api-Key")
		a.mu.Lock()
		a.seen = append(a.seen, r.URL.Path+" "+key+" "+r.URL.Query().Get("key"))
		a.mu.Unlock()
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, "/v1/landed", http.StatusFound)
		case "/slow":
			a.slow <- struct{}{}
			<-r.Context().Done()
		case "/v1/landed":
			w.Write([]byte(`{"landed":true}`))
		default:
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Echo", key)
			json.NewEncoder(w).Encode(map[string]string{"echo": key, "q": r.URL.Query().Get("key")})
		}
	}))
	t.Cleanup(a.Close)
	return a
}

// requests returns what the API has seen and forgets it.
func (a *egressAPI) requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.seen
	a.seen = nil
	return s
}

func (a *egressAPI) port() string {
	u, _ := url.Parse(a.URL)
	return u.Port()
}

// socketTap puts a relay in place of the egress proxy's socket in the
// docker runner's state dir (same mode and group), so containers started
// from now on connect to it; it records every byte they send the proxy.
func socketTap(t *testing.T, td *testDaemon) func() string {
	t.Helper()
	sock := filepath.Join(td.d.docker.StateDir, "egress", "egress.sock")
	fi, err := os.Lstat(sock)
	if err != nil {
		t.Fatal(err)
	}
	real := sock + ".real"
	if err := os.Rename(sock, real); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(sock, -1, int(fi.Sys().(*syscall.Stat_t).Gid)); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sock, fi.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		sent bytes.Buffer
		wg   sync.WaitGroup
	)
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer in.Close()
				out, err := net.Dial("unix", real)
				if err != nil {
					return
				}
				defer out.Close()
				go func() {
					var b bytes.Buffer
					io.Copy(out, io.TeeReader(in, &b))
					mu.Lock()
					sent.Write(b.Bytes())
					mu.Unlock()
					out.(*net.UnixConn).CloseWrite()
				}()
				io.Copy(in, out)
			})
		}
	})
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return sent.String()
	}
}

// TestDockerEgress: an HTTP tool with a secret in a header and in the
// query runs with isolation: docker. Its container has no network and no
// secret: it reaches the daemon's egress proxy through the socket bound
// read-only into it, sending the stand-in tokens; the API gets the real
// secret, the tool's result has it redacted. A redirect's follow-up goes
// the same way; a wrong or stale token through the socket is refused; a
// container killed mid-call fails that call, and the next one works.
func TestDockerEgress(t *testing.T) {
	const secret = "s3c+r/e=t&Zq8vK2mXw9\"x" // needs escaping in a query and in JSON
	leaks := func(s string) string {
		for _, form := range []string{secret, url.QueryEscape(secret), "Zq8vK2mXw9"} {
			if strings.Contains(s, form) {
				return form
			}
		}
		return ""
	}
	srv := newEgressAPI(t)
	_, cli := imagetest.Engine(t)
	td := startDockerDaemon(t, func(c *Config) { c.HTTP.AllowPrivateHosts = []string{"localhost"} })
	tap := socketTap(t, td)
	var (
		omu  sync.Mutex
		sent = map[string][]*executors.HTTPCall{} // per tool
	)
	td.d.disp.Observe(func(r *executors.Request) {
		if r.HTTP == nil {
			return
		}
		omu.Lock()
		defer omu.Unlock()
		c := *r.HTTP
		sent[r.Tool] = append(sent[r.Tool], &c)
	})
	c := td.client
	v := secret
	putSecret(t, c, "api_key", api.SecretValue{Value: &v})
	def := func(name, iso, path, extra string) {
		t.Helper()
		create(t, c, `{"name":"`+name+`","description":"d","kind":"http","secrets":["api_key"],"isolation":"`+iso+`",`+extra+`"http":{"method":"GET",
			"url":"http://localhost:`+srv.port()+path+`","params":{"key":"{{secret.api_key}}"},"headers":{"X-Api-Key":"{{secret.api_key}}"},
			"allowed_domains":["localhost"]}}`)
	}
	def("get_docker", "docker", "/v1", "")
	def("get_process", "process", "/v1", "")
	def("redirect_docker", "docker", "/redirect", "")
	def("slow_docker", "docker", "/slow", `"limits":{"timeout":"30s"},`)
	create(t, c, `{"name":"look","description":"looks for the egress socket","kind":"shell","isolation":"docker","shell":{"command":"ls /run/toolcage-egress"}}`)

	// pick is what both isolations must agree on: the status and body.
	pick := func(r api.CallResponse) string {
		var v struct {
			Status  int
			Headers map[string]string
			Body    any
		}
		if err := json.Unmarshal(r.Result, &v); err != nil {
			t.Fatalf("http result %s: %v", r.Result, err)
		}
		return fmt.Sprintf("%d|%v|%s|%v", v.Status, v.Body, v.Headers["x-echo"], r.IsError)
	}
	got := map[string]string{}
	for _, tool := range []string{"get_docker", "get_process"} {
		r, err := callTool(c, tool, map[string]any{})
		if err != nil || r.IsError {
			t.Fatalf("%s: %v %+v", tool, err, r)
		}
		if form := leaks(string(r.Result)); form != "" || !strings.Contains(string(r.Result), "[REDACTED:secret:api_key]") {
			t.Fatalf("%s: result %s (holds %q), want the echo redacted", tool, r.Result, form)
		}
		got[tool] = pick(r)
		if reqs := srv.requests(); len(reqs) != 1 || reqs[0] != "/v1 "+secret+" "+secret {
			t.Fatalf("%s: the API got %q, want the secret in header and query", tool, reqs)
		}
	}
	if got["get_docker"] != got["get_process"] {
		t.Fatalf("process and docker disagree:\nprocess: %s\ndocker:  %s", got["get_process"], got["get_docker"])
	}

	// What the container had: the request over go-plugin with stand-ins
	// and the socket's address, an environment and command line without
	// the secret, no network, the socket's dir bound read-only.
	omu.Lock()
	dreq, preq := sent["get_docker"][0], sent["get_process"][0]
	omu.Unlock()
	if dreq.Egress == nil || dreq.Egress.Addr != "unix:/run/toolcage-egress/egress.sock" || preq.Egress == nil || !strings.HasPrefix(preq.Egress.Addr, "127.0.0.1:") {
		t.Fatalf("egress addresses: docker %+v, process %+v", dreq.Egress, preq.Egress)
	}
	standIn := dreq.Headers["X-Api-Key"]
	if !strings.HasPrefix(standIn, "tcx") || !strings.Contains(dreq.URL, "key="+standIn) {
		t.Fatalf("the container's request holds no stand-in: %s %v", dreq.URL, dreq.Headers)
	}
	if form := leaks(dreq.URL + " " + strings.Join(mapValues(dreq.Headers), " ")); form != "" {
		t.Fatalf("the container's request holds the secret (%q)", form)
	}
	httpContainers := func() []string {
		res, err := cli.ContainerList(context.Background(), client.ContainerListOptions{Filters: make(client.Filters).
			Add("label", host.LabelDaemon+"="+td.d.docker.ID()).Add("label", host.LabelKind+"=http")})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, ct := range res.Items {
			ids = append(ids, ct.ID)
		}
		return ids
	}
	ids := httpContainers()
	if len(ids) == 0 {
		t.Fatal("no http container")
	}
	for _, id := range ids {
		in, err := cli.ContainerInspect(context.Background(), id, client.ContainerInspectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ct := in.Container
		if form := leaks(strings.Join(append(append(ct.Config.Env, ct.Config.Cmd...), ct.Args...), " ")); form != "" {
			t.Fatalf("container %.12s has the secret (%q) in its environment or arguments", id, form)
		}
		if ct.HostConfig.NetworkMode != "none" {
			t.Fatalf("container %.12s of an egress call has network %q, want none", id, ct.HostConfig.NetworkMode)
		}
		var egress []string
		for _, m := range ct.Mounts {
			if m.Destination == "/run/toolcage-egress" {
				egress = append(egress, fmt.Sprintf("%s rw=%v", m.Source, m.RW))
			}
		}
		if want := filepath.Join(td.d.docker.StateDir, "egress") + " rw=false"; len(egress) != 1 || egress[0] != want {
			t.Fatalf("container %.12s binds the egress socket as %v, want %s", id, egress, want)
		}
	}
	// What the container sent the proxy: the stand-in, never the secret.
	if tapped := tap(); !strings.Contains(tapped, "X-Api-Key: "+standIn) || !strings.Contains(tapped, "key="+standIn) ||
		!strings.Contains(tapped, executors.EgressTokenHeader+": "+dreq.Egress.Token) || leaks(tapped) != "" {
		t.Fatalf("the container sent the proxy:\n%s", tapped)
	}
	// A shell tool's container does not get the socket.
	if r, err := callTool(c, "look", nil); err != nil || !strings.Contains(shellOut(t, r).Stderr, "No such file") {
		t.Fatalf("a shell container looking for the egress socket: %v %s", err, r.Result)
	}

	t.Run("redirect", func(t *testing.T) {
		r, err := callTool(c, "redirect_docker", map[string]any{})
		if err != nil || r.IsError || !strings.Contains(string(r.Result), `"landed":true`) {
			t.Fatalf("redirect: %v %s", err, r.Result)
		}
		// The first request got the secret from the proxy; the follow-up
		// went through the socket too, as the executor sent it.
		reqs := srv.requests()
		if len(reqs) != 2 || reqs[0] != "/redirect "+secret+" "+secret || !strings.HasPrefix(reqs[1], "/v1/landed ") || leaks(reqs[1]) != "" {
			t.Fatalf("the API got %q", reqs)
		}
		if tapped := tap(); !strings.Contains(tapped, "GET http://localhost:"+srv.port()+"/v1/landed ") {
			t.Fatalf("the follow-up did not go through the socket:\n%s", tapped)
		}
	})

	t.Run("wrong and stale tokens", func(t *testing.T) {
		sock := filepath.Join(td.d.docker.StateDir, "egress", "egress.sock.real")
		tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: "egress"}), DisableKeepAlives: true,
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", sock)
			}}
		for name, token := range map[string]string{"wrong": "tcx" + strings.Repeat("0", 32), "stale": dreq.Egress.Token, "none": ""} {
			req, _ := http.NewRequest("GET", dreq.URL, nil)
			for k, v := range dreq.Headers {
				req.Header.Set(k, v)
			}
			req.Header.Set(executors.EgressTokenHeader, token)
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden || !strings.HasPrefix(resp.Header.Get(executors.EgressErrorHeader), "policy_denied: no such call") {
				t.Fatalf("%s token: %d %q", name, resp.StatusCode, resp.Header.Get(executors.EgressErrorHeader))
			}
		}
		if reqs := srv.requests(); len(reqs) != 0 {
			t.Fatalf("refused tokens reached the API: %q", reqs)
		}
	})

	t.Run("docker kill", func(t *testing.T) {
		errc := make(chan error, 1)
		go func() { _, err := callTool(c, "slow_docker", map[string]any{}); errc <- err }()
		select {
		case <-srv.slow:
		case err := <-errc:
			t.Fatalf("slow call ended early: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatal("the slow call never reached the API")
		}
		for _, id := range httpContainers() {
			if _, err := cli.ContainerKill(context.Background(), id, client.ContainerKillOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := <-errc; codeOf(err) != errdefs.ExecutorFailed {
			t.Fatalf("call whose container was killed: %v", err)
		}
		srv.requests()
		r, err := callTool(c, "get_docker", map[string]any{})
		if err != nil || r.IsError || pick(r) != got["get_docker"] {
			t.Fatalf("the call after docker kill: %v %s", err, r.Result)
		}
		if reqs := srv.requests(); len(reqs) != 1 || reqs[0] != "/v1 "+secret+" "+secret {
			t.Fatalf("the API got %q", reqs)
		}
	})
	if n := td.d.egress.Len(); n != 0 {
		t.Fatalf("%d grants live after the calls", n)
	}
}
