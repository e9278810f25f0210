package httpexec_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	httpexec "github.com/toolcage/toolcage/executors/http"
)

// The test servers listen on 127.0.0.1; calls name that literal in both
// AllowedDomains and AllowPrivateHosts.
var local = []string{"127.0.0.1"}

func call(rawURL string) *executors.Request {
	return &executors.Request{
		Tool: "t", Kind: executors.KindHTTP,
		HTTP: &executors.HTTPCall{Method: "GET", URL: rawURL, AllowedDomains: local, AllowPrivateHosts: local},
	}
}

func execute(t testing.TB, e *httpexec.Executor, req *executors.Request) (*executors.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return e.Execute(ctx, req)
}

// response is the result value, with the body kept raw.
type response struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
}

func mustOK(t *testing.T, res *executors.Result, err error) response {
	t.Helper()
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	var r response
	if err := json.Unmarshal(res.Value, &r); err != nil {
		t.Fatalf("value %s: %v", res.Value, err)
	}
	if res.OutputBytes != int64(len(res.Value)) {
		t.Errorf("OutputBytes = %d, value is %d bytes", res.OutputBytes, len(res.Value))
	}
	return r
}

func wantCode(t *testing.T, err error, code errdefs.Code, limit string) {
	t.Helper()
	if got := errdefs.CodeOf(err); got != code {
		t.Fatalf("err = %v (code %q), want code %q", err, got, code)
	}
	if got := errdefs.LimitOf(err); got != limit {
		t.Fatalf("err = %v (limit %q), want limit %q", err, got, limit)
	}
}

func server(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

func TestResponseBodies(t *testing.T) {
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/json":
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.Header().Add("X-Multi", "a")
			w.Header().Add("X-Multi", "b")
			io.WriteString(w, `{"a": 1, "big": 12345678901234567890, "list": [true, null, "<b>"]}`)
		case "/sniffed":
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, " [1, 2, 3]\n")
		case "/bom":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "\xef\xbb\xbf{\"ok\":true}")
		case "/badjson":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"oops": `)
		case "/text":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<p>héllo & \"bye\"</p>")
		case "/binary":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write([]byte{0x89, 'P', 'N', 'G', 0x00, 0xff})
		case "/nul":
			w.Write([]byte("abc\x00def"))
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		}
	})
	e := httpexec.New(httpexec.Config{})
	tests := []struct {
		path, body string
	}{
		{"/json", `{"a":1,"big":12345678901234567890,"list":[true,null,"<b>"]}`},
		{"/sniffed", `[1,2,3]`},
		{"/bom", `{"ok":true}`},
		{"/badjson", `{"data":"{\"oops\": "}`},
		{"/text", `{"data":"<p>héllo & \"bye\"</p>"}`},
		{"/binary", `{"data_base64":"` + base64.StdEncoding.EncodeToString([]byte{0x89, 'P', 'N', 'G', 0x00, 0xff}) + `"}`},
		{"/nul", `{"data_base64":"` + base64.StdEncoding.EncodeToString([]byte("abc\x00def")) + `"}`},
		{"/empty", `{"data":""}`},
	}
	for _, tc := range tests {
		res, err := execute(t, e, call(s.URL+tc.path))
		r := mustOK(t, res, err)
		if res.IsError {
			t.Errorf("%s: IsError set: %s", tc.path, res.Error)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, r.Body); err != nil {
			t.Fatal(err)
		}
		if compact.String() != tc.body {
			t.Errorf("%s: body %s, want %s", tc.path, compact.String(), tc.body)
		}
		if tc.path == "/json" {
			if r.Status != 200 || r.Headers["x-multi"] != "a, b" || !strings.HasPrefix(r.Headers["content-type"], "application/json") {
				t.Errorf("/json: status %d headers %v", r.Status, r.Headers)
			}
			if bytes.Contains(res.Value, []byte(`\u003c`)) {
				t.Errorf("/json: value is HTML-escaped: %s", res.Value)
			}
		}
	}
}

func TestStatusErrorKeepsValue(t *testing.T) {
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"code": %d}`, code)
	})
	e := httpexec.New(httpexec.Config{})
	for _, tc := range []struct {
		code    int
		isError bool
		msg     string
	}{
		{200, false, ""},
		{302, false, ""}, // no Location: not followed, returned as is
		{399, false, ""},
		{400, true, "HTTP 400 Bad Request"},
		{404, true, "HTTP 404 Not Found"},
		{418, true, "HTTP 418 I'm a teapot"},
		{500, true, "HTTP 500 Internal Server Error"},
		{599, true, "HTTP 599"},
	} {
		res, err := execute(t, e, call(s.URL+"/"+strconv.Itoa(tc.code)))
		r := mustOK(t, res, err)
		if res.IsError != tc.isError || res.Error != tc.msg {
			t.Errorf("%d: IsError=%v Error=%q, want %v %q", tc.code, res.IsError, res.Error, tc.isError, tc.msg)
		}
		if r.Status != tc.code || string(r.Body) != fmt.Sprintf(`{"code":%d}`, tc.code) {
			t.Errorf("%d: value %s", tc.code, res.Value)
		}
	}
}

// streamServer serves /n/<count>[?cl=1]: count bytes of 'x', with a
// Content-Length when cl is set, written in 32 KiB chunks with flushes. It
// reports, per request, how many bytes it wrote and whether a write failed
// (the client hung up).
type streamResult struct {
	written int64
	failed  bool
}

func streamServer(t *testing.T) (*httptest.Server, chan streamResult) {
	done := make(chan streamResult, 16)
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.ParseInt(strings.TrimPrefix(r.URL.Path, "/n/"), 10, 64)
		if r.URL.Query().Get("cl") != "" {
			w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		}
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusOK)
		chunk := bytes.Repeat([]byte("x"), 32<<10)
		var res streamResult
		for res.written < n {
			c := chunk
			if left := n - res.written; left < int64(len(c)) {
				c = c[:left]
			}
			m, err := w.Write(c)
			res.written += int64(m)
			if err == nil {
				err = http.NewResponseController(w).Flush()
			}
			if err != nil {
				res.failed = true
				break
			}
		}
		done <- res
	})
	return s, done
}

func TestResponseSizeCapAtTheEdge(t *testing.T) {
	s, done := streamServer(t)
	const max = 100_000
	e := httpexec.New(httpexec.Config{MaxResponseBytes: max})
	for _, cl := range []string{"", "?cl=1"} {
		res, err := execute(t, e, call(s.URL+"/n/"+strconv.Itoa(max)+cl))
		r := mustOK(t, res, err)
		var b struct{ Data string }
		json.Unmarshal(r.Body, &b)
		if len(b.Data) != max {
			t.Errorf("%q: got %d bytes, want %d", cl, len(b.Data), max)
		}
		<-done

		_, err = execute(t, e, call(s.URL+"/n/"+strconv.Itoa(max+1)+cl))
		wantCode(t, err, errdefs.LimitExceeded, errdefs.LimitOutput)
		<-done
	}
	// The call's own cap overrides the executor's.
	req := call(s.URL + "/n/11")
	req.HTTP.MaxResponseBytes = 10
	_, err := execute(t, e, req)
	wantCode(t, err, errdefs.LimitExceeded, errdefs.LimitOutput)
	<-done
}

// TestResponseSizeCapHangsUp: a body far past the cap is not read; the
// server sees the client go away long before it has written everything.
func TestResponseSizeCapHangsUp(t *testing.T) {
	s, done := streamServer(t)
	const huge = 1 << 30
	e := httpexec.New(httpexec.Config{MaxResponseBytes: 1000})
	for _, cl := range []string{"", "?cl=1"} {
		start := time.Now()
		_, err := execute(t, e, call(s.URL+"/n/"+strconv.Itoa(huge)+cl))
		wantCode(t, err, errdefs.LimitExceeded, errdefs.LimitOutput)
		select {
		case r := <-done:
			if !r.failed || r.written >= huge {
				t.Errorf("%q: server wrote %d bytes, failed=%v: the client read on", cl, r.written, r.failed)
			}
			t.Logf("%q: server wrote %d bytes before the write failed", cl, r.written)
			if r.written > 64<<20 {
				t.Errorf("%q: server managed %d bytes before noticing", cl, r.written)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%q: server still writing 10s after the call ended", cl)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%q: took %v", cl, d)
		}
	}
}

func TestTimeoutCoversTheWholeBody(t *testing.T) {
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow-headers" {
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
			return
		}
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		for i := 0; i < 200; i++ { // 10 s of trickle
			select {
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
			http.NewResponseController(w).Flush()
		}
	})
	e := httpexec.New(httpexec.Config{Timeout: 300 * time.Millisecond})
	for _, path := range []string{"/trickle", "/slow-headers"} {
		start := time.Now()
		_, err := execute(t, e, call(s.URL+path))
		wantCode(t, err, errdefs.Timeout, errdefs.LimitTimeout)
		if d := time.Since(start); d < 250*time.Millisecond || d > 2*time.Second {
			t.Errorf("%s: stopped after %v, want about 300ms", path, d)
		}
	}
	// Limits.Timeout overrides the default.
	req := call(s.URL + "/trickle")
	req.Limits.Timeout = 100 * time.Millisecond
	start := time.Now()
	_, err := httpexec.New(httpexec.Config{Timeout: time.Minute}).Execute(context.Background(), req)
	wantCode(t, err, errdefs.Timeout, errdefs.LimitTimeout)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Limits.Timeout ignored: %v", d)
	}
}

func TestCancelledContext(t *testing.T) {
	s := server(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	e := httpexec.New(httpexec.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := e.Execute(ctx, call(s.URL))
	wantCode(t, err, errdefs.Unavailable, "")
}

func TestRedirectsAreRechecked(t *testing.T) {
	var targetHits atomic.Int64
	target := server(t, func(w http.ResponseWriter, r *http.Request) {
		targetHits.Add(1)
		io.WriteString(w, `{"landed": true}`)
	})
	_, targetPort, _ := net.SplitHostPort(target.Listener.Addr().String())
	origin := server(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-localhost": // same server, but "localhost" is not on the allowlist
			http.Redirect(w, r, "http://localhost:"+targetPort+"/", http.StatusFound)
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/iam/", http.StatusFound)
		case "/to-mapped":
			http.Redirect(w, r, "http://[::ffff:127.0.0.1]:"+targetPort+"/", http.StatusFound)
		case "/to-decimal":
			http.Redirect(w, r, "http://2130706433:"+targetPort+"/", http.StatusFound)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/to-allowed":
			http.Redirect(w, r, target.URL+"/", http.StatusTemporaryRedirect)
		}
	})
	e := httpexec.New(httpexec.Config{})
	// "/to-allowed" goes to an allowed host on another port: refused too
	// unless that host:port is listed (allowed_domains is port-scoped for
	// redirects).
	for _, p := range []string{"/to-localhost", "/to-metadata", "/to-mapped", "/to-decimal", "/to-file", "/to-allowed"} {
		_, err := execute(t, e, call(origin.URL+p))
		wantCode(t, err, errdefs.PolicyDenied, "")
	}
	if n := targetHits.Load(); n != 0 {
		t.Fatalf("refused redirect targets got %d requests", n)
	}
	req := call(origin.URL + "/to-allowed")
	req.HTTP.AllowedDomains = append(slices.Clone(local), "127.0.0.1:"+targetPort)
	res, err := execute(t, e, req)
	if r := mustOK(t, res, err); string(r.Body) != `{"landed":true}` {
		t.Fatalf("allowed redirect: %s", res.Value)
	}
}

func TestMethodHeadersBodyRoundTrip(t *testing.T) {
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"method": r.Method, "path": r.URL.RequestURI(), "token": r.Header.Get("X-Token"),
			"ua": r.Header.Get("User-Agent"), "ctype": r.Header.Get("Content-Type"), "body": string(b),
		})
	})
	e := httpexec.New(httpexec.Config{})
	for _, tc := range []struct {
		method, wantMethod, body, ctype, wantCtype string
	}{
		{"", "GET", "", "", ""},
		{"get", "GET", "", "", ""},
		{"POST", "POST", `{"city":"Tokyo"}`, "", "application/json"},
		{"PUT", "PUT", "a=1&b=2", "application/x-www-form-urlencoded", "application/x-www-form-urlencoded"},
		{"PATCH", "PATCH", `[1]`, "application/merge-patch+json", "application/merge-patch+json"},
		{"DELETE", "DELETE", "", "", ""},
		{"OPTIONS", "OPTIONS", "", "", ""},
	} {
		req := call(s.URL + "/forecast/T%C5%8Dky%C5%8D?days=3&units=metric")
		req.HTTP.Method = tc.method
		req.HTTP.Body = []byte(tc.body)
		req.HTTP.Headers = map[string]string{"x-token": "abc 123"}
		if tc.ctype != "" {
			req.HTTP.Headers["Content-Type"] = tc.ctype
		}
		res, err := execute(t, e, req)
		r := mustOK(t, res, err)
		var got map[string]string
		if err := json.Unmarshal(r.Body, &got); err != nil {
			t.Fatalf("%s: %s", tc.method, r.Body)
		}
		want := map[string]string{
			"method": tc.wantMethod, "path": "/forecast/T%C5%8Dky%C5%8D?days=3&units=metric", "token": "abc 123",
			"ua": "toolcage-http/1", "ctype": tc.wantCtype, "body": tc.body,
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q", tc.method, k, got[k], v)
			}
		}
	}
}

func TestHEAD(t *testing.T) {
	var method atomic.Value
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		method.Store(r.Method)
		w.Header().Set("Content-Length", "50000000") // far over the cap: HEAD has no body
		w.Header().Set("ETag", `"v1"`)
		w.WriteHeader(http.StatusOK)
	})
	e := httpexec.New(httpexec.Config{MaxResponseBytes: 1000})
	req := call(s.URL + "/file")
	req.HTTP.Method = "HEAD"
	res, err := execute(t, e, req)
	r := mustOK(t, res, err)
	if method.Load() != "HEAD" || r.Status != 200 || r.Headers["etag"] != `"v1"` || r.Headers["content-length"] != "50000000" {
		t.Fatalf("HEAD: %s", res.Value)
	}
	if string(r.Body) != `{"data":""}` {
		t.Fatalf("HEAD body %s", r.Body)
	}
}

func TestRefusals(t *testing.T) {
	var hits atomic.Int64
	s := server(t, func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })
	_, port, _ := net.SplitHostPort(s.Listener.Addr().String())
	e := httpexec.New(httpexec.Config{})
	type mod func(c *executors.HTTPCall)
	tests := []struct {
		name string
		mod  mod
		code errdefs.Code
	}{
		{"not allowlisted", func(c *executors.HTTPCall) { c.URL = "http://localhost:" + port + "/" }, errdefs.PolicyDenied},
		{"private not allowed", func(c *executors.HTTPCall) { c.AllowPrivateHosts = nil }, errdefs.PolicyDenied},
		{"private host named but not allowlisted", func(c *executors.HTTPCall) { c.AllowedDomains = []string{"example.com"} }, errdefs.PolicyDenied},
		{"metadata", func(c *executors.HTTPCall) {
			c.URL = "http://169.254.169.254/latest/meta-data/"
			c.AllowedDomains = []string{"169.254.169.254"}
			c.AllowPrivateHosts = []string{"169.254.169.254"}
		}, errdefs.PolicyDenied},
		{"userinfo", func(c *executors.HTTPCall) { c.URL = "http://127.0.0.1@evil.com:" + port + "/" }, errdefs.PolicyDenied},
		{"decimal host", func(c *executors.HTTPCall) { c.URL = "http://2130706433:" + port + "/" }, errdefs.PolicyDenied},
		{"scheme", func(c *executors.HTTPCall) { c.URL = "file:///etc/passwd" }, errdefs.PolicyDenied},
		{"empty allowlist", func(c *executors.HTTPCall) { c.AllowedDomains = nil }, errdefs.PolicyDenied},
		{"bad pattern", func(c *executors.HTTPCall) { c.AllowedDomains = []string{"*.com"} }, errdefs.PolicyDenied},
		{"Host header", func(c *executors.HTTPCall) { c.Headers = map[string]string{"host": "internal.example"} }, errdefs.PolicyDenied},
		{"Upgrade header", func(c *executors.HTTPCall) { c.Headers = map[string]string{"Upgrade": "h2c"} }, errdefs.PolicyDenied},
		{"Transfer-Encoding header", func(c *executors.HTTPCall) { c.Headers = map[string]string{"Transfer-Encoding": "chunked"} }, errdefs.PolicyDenied},
		{"CONNECT", func(c *executors.HTTPCall) { c.Method = "CONNECT" }, errdefs.PolicyDenied},
		{"header CRLF", func(c *executors.HTTPCall) { c.Headers = map[string]string{"X-A": "a\r\nHost: evil"} }, errdefs.InvalidRequest},
		{"header name", func(c *executors.HTTPCall) { c.Headers = map[string]string{"X A": "a"} }, errdefs.InvalidRequest},
		{"method", func(c *executors.HTTPCall) { c.Method = "GET /x" }, errdefs.InvalidRequest},
	}
	for _, tc := range tests {
		req := call(s.URL + "/")
		tc.mod(req.HTTP)
		_, err := execute(t, e, req)
		t.Logf("%s: %v", tc.name, err)
		if got := errdefs.CodeOf(err); got != tc.code {
			t.Errorf("%s: err = %v (code %q), want %q", tc.name, err, got, tc.code)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("server got %d requests", n)
	}
	if _, err := e.Execute(context.Background(), &executors.Request{Kind: executors.KindHTTP}); errdefs.CodeOf(err) != errdefs.InvalidRequest {
		t.Fatalf("no HTTP call: %v", err)
	}
	var nd interface{ Unwrap() error }
	_, err := execute(t, e, call("http://169.254.169.254/"))
	if !errors.As(err, &nd) || !strings.Contains(err.Error(), "network guard refused") {
		t.Fatalf("refusal does not carry the guard's error: %v", err)
	}
}

func TestUnreachableIsToolError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	res, err := execute(t, httpexec.New(httpexec.Config{}), call("http://"+addr+"/x?key=s3cret"))
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if !res.IsError || !strings.Contains(res.Error, "connection refused") || string(res.Value) != "null" {
		t.Fatalf("result %+v", res)
	}
	if strings.Contains(res.Error, "s3cret") {
		t.Fatalf("error shows the query: %s", res.Error)
	}
}

func TestOutputLimit(t *testing.T) {
	s := server(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, strings.Repeat("y", 500)) })
	req := call(s.URL)
	req.Limits.OutputBytes = 200
	_, err := execute(t, httpexec.New(httpexec.Config{}), req)
	wantCode(t, err, errdefs.LimitExceeded, errdefs.LimitOutput)
}

// TestConcurrentCalls runs calls with many different allowlists at once, so
// that the guard cache builds and evicts entries under the race detector.
func TestConcurrentCalls(t *testing.T) {
	s := server(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"ok":true}`) })
	e := httpexec.New(httpexec.Config{})
	defer e.CloseIdleConnections()
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := call(s.URL)
			req.HTTP.AllowedDomains = []string{"127.0.0.1", fmt.Sprintf("h%d.example.com", i%50)}
			res, err := execute(t, e, req)
			if err == nil && string(res.Value) == "" {
				err = errors.New("empty value")
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkHTTPExecute and BenchmarkDirectHTTPGet fetch the same small JSON
// document from the same local server, through the executor (guard, checks,
// encoding) and with a plain http.Get.
func BenchmarkHTTPExecute(b *testing.B) {
	s := benchServer(b)
	e := httpexec.New(httpexec.Config{})
	req := call(s.URL + "/item?id=42")
	ctx := context.Background()
	b.ReportAllocs()
	var lat latencies
	for b.Loop() {
		t0 := time.Now()
		res, err := e.Execute(ctx, req)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
		lat = append(lat, time.Since(t0))
	}
	lat.report(b)
}

func BenchmarkDirectHTTPGet(b *testing.B) {
	s := benchServer(b)
	b.ReportAllocs()
	var lat latencies
	for b.Loop() {
		t0 := time.Now()
		resp, err := http.Get(s.URL + "/item?id=42")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadAll(resp.Body); err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		lat = append(lat, time.Since(t0))
	}
	lat.report(b)
}

// latencies collects per-call times to report the median next to the mean.
type latencies []time.Duration

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	b.ReportMetric(float64(l[len(l)/2].Nanoseconds()), "p50-ns/op")
	b.ReportMetric(float64(l[len(l)*99/100].Nanoseconds()), "p99-ns/op")
}

func benchServer(b *testing.B) *httptest.Server {
	doc := []byte(`{"id": 42, "name": "widget", "tags": ["a", "b", "c"], "price": 9.99, "stock": {"eu": 10, "us": 3}}`)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(doc)
	}))
	b.Cleanup(s.Close)
	return s
}
