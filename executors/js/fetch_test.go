package js

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
)

// loopback lets fetch reach a test server on 127.0.0.1: the IP literal
// must be in the allowlist and, being a private address, named in
// AllowPrivateHosts too.
var loopback = []string{"127.0.0.1"}

// fetchServer is a test API on 127.0.0.1.
type fetchServer struct {
	*httptest.Server
	// slowStarted is closed when a /slow request arrived, slowCancelled
	// when one saw its client go.
	slowStarted, slowCancelled chan struct{}
	startOnce, cancelOnce      sync.Once
	// streamed counts the bytes /stream managed to write.
	streamed atomic.Int64
	// streamDone is closed when /stream returned.
	streamDone chan struct{}
}

func newFetchServer(t *testing.T) *fetchServer {
	t.Helper()
	s := &fetchServer{slowStarted: make(chan struct{}), slowCancelled: make(chan struct{}), streamDone: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"city": "Oslo", "temp_c": 21.5, "tags": ["a", "b"]}`)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"method":      r.Method,
			"contentType": r.Header.Get("Content-Type"),
			"apiKey":      r.Header.Get("X-Api-Key"),
			"multi":       r.Header.Values("X-Multi"),
			"userAgent":   r.Header.Get("User-Agent"),
			"accept":      r.Header.Get("Accept"),
			"body":        string(body),
			"query":       r.URL.RawQuery,
		})
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such thing", http.StatusNotFound)
	})
	mux.HandleFunc("/headers", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Add("X-Multi", "one")
		w.Header().Add("X-Multi", "two")
		w.Header().Set("X-Request-Id", "abc-123")
		io.WriteString(w, "\ufeffhello")
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/json", http.StatusFound)
	})
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		// The same server under a name the allowlist does not hold.
		http.Redirect(w, r, "http://localhost:"+r.URL.Query().Get("port")+"/json", http.StatusFound)
	})
	mux.HandleFunc("/bytes", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		body := strings.Repeat("x", n)
		if r.URL.Query().Get("chunked") != "" {
			// No Content-Length: flush a first part, then the rest.
			io.WriteString(w, body[:n/2])
			w.(http.Flusher).Flush()
			io.WriteString(w, body[n/2:])
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(n))
		io.WriteString(w, body)
	})
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		defer close(s.streamDone)
		chunk := strings.Repeat("y", 32<<10)
		for range 2048 { // 64 MiB
			n, err := io.WriteString(w, chunk)
			s.streamed.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		s.startOnce.Do(func() { close(s.slowStarted) })
		select {
		case <-r.Context().Done():
			s.cancelOnce.Do(func() { close(s.slowCancelled) })
		case <-time.After(10 * time.Second):
		}
	})
	mux.HandleFunc("/slow-started", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-s.slowStarted:
			io.WriteString(w, "started")
		case <-time.After(5 * time.Second):
			http.Error(w, "no slow request", http.StatusGatewayTimeout)
		}
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// port is the server's port, as text.
func (s *fetchServer) port() string {
	_, p, _ := net.SplitHostPort(s.Listener.Addr().String())
	return p
}

// fetchCall runs code with the network permission (unless perms says
// otherwise), args and lim, allowed to reach allowed and private.
func fetchCall(t testing.TB, code, args string, lim executors.Limits, allowed, private []string, perms ...string) (*executors.Result, error) {
	t.Helper()
	return fetchCallCtx(context.Background(), t, code, args, lim, allowed, private, perms...)
}

func fetchCallCtx(ctx context.Context, t testing.TB, code, args string, lim executors.Limits, allowed, private []string, perms ...string) (*executors.Result, error) {
	t.Helper()
	if perms == nil {
		perms = []string{"network"}
	}
	settle(t)
	e := New(Config{})
	return e.Execute(ctx, &executors.Request{
		CallID: "c1", Tool: "t", Args: json.RawMessage(args), Limits: lim, Permissions: perms,
		JS: &executors.JSCall{Code: code, AllowedDomains: allowed, AllowPrivateHosts: private},
	})
}

// wantValue fails unless the call succeeded with the JSON value want.
func wantValue(t *testing.T, res *executors.Result, err error, want string) {
	t.Helper()
	if err != nil {
		t.Fatalf("err = %v", err)
	}
	if res.IsError {
		t.Fatalf("tool failed: %s", res.Error)
	}
	var got, exp any
	if err := json.Unmarshal(res.Value, &got); err != nil {
		t.Fatalf("value %s: %v", res.Value, err)
	}
	if err := json.Unmarshal([]byte(want), &exp); err != nil {
		t.Fatalf("want %s: %v", want, err)
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(exp)
	if string(g) != string(w) {
		t.Errorf("value = %s\nwant    %s", g, w)
	}
}

// urlArgs is the args of a call that fetches from s: {"base": URL, "port": port}.
func urlArgs(s *fetchServer) string {
	return fmt.Sprintf(`{"base": %q, "port": %q}`, s.URL, s.port())
}

func TestFetchOnlyWithNetworkPermission(t *testing.T) {
	const code = "return [typeof fetch, 'fetch' in globalThis]"
	for _, tt := range []struct {
		name  string
		perms []string
		want  string
	}{
		{"no permissions", []string{}, `["undefined", false]`},
		{"other permissions", []string{"filesystem", "shell"}, `["undefined", false]`},
		{"network", []string{"network"}, `["function", true]`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := fetchCall(t, code, "", executors.Limits{}, []string{"example.com"}, nil, tt.perms...)
			wantValue(t, res, err, tt.want)
		})
	}
}

func TestFetchGetJSON(t *testing.T) {
	s := newFetchServer(t)
	res, err := fetchCall(t, `
		const res = await fetch(args.base + '/json');
		const data = await res.json();
		return {
			ok: res.ok, status: res.status, statusText: res.statusText,
			url: res.url === args.base + '/json', redirected: res.redirected, type: res.type,
			contentType: res.headers.get('Content-Type'), bodyUsed: res.bodyUsed,
			tag: Object.prototype.toString.call(res), data,
		};
	`, urlArgs(s), executors.Limits{}, loopback, loopback)
	wantValue(t, res, err, `{"ok": true, "status": 200, "statusText": "OK", "url": true, "redirected": false,
		"type": "basic", "contentType": "application/json", "bodyUsed": true, "tag": "[object Response]",
		"data": {"city": "Oslo", "temp_c": 21.5, "tags": ["a", "b"]}}`)
}

func TestFetchRequestBodies(t *testing.T) {
	s := newFetchServer(t)
	for _, tt := range []struct {
		name string
		init string
		want string
	}{
		{"object as JSON", `{method: 'POST', headers: {'X-Api-Key': 'k1'}, body: {city: 'Oslo', days: 3}}`,
			`{"method": "POST", "contentType": "application/json", "apiKey": "k1", "body": "{\"city\":\"Oslo\",\"days\":3}"}`},
		{"string", `{method: 'put', body: 'plain words'}`,
			`{"method": "PUT", "contentType": "text/plain;charset=UTF-8", "apiKey": "", "body": "plain words"}`},
		{"own content type kept", `{method: 'PATCH', headers: {'content-type': 'application/merge-patch+json'}, body: {a: null}}`,
			`{"method": "PATCH", "contentType": "application/merge-patch+json", "apiKey": "", "body": "{\"a\":null}"}`},
		{"bytes", `{method: 'POST', body: new Uint8Array([104, 105])}`,
			`{"method": "POST", "contentType": "", "apiKey": "", "body": "hi"}`},
		{"array buffer", `{method: 'POST', body: new Uint8Array([111, 107]).buffer}`,
			`{"method": "POST", "contentType": "", "apiKey": "", "body": "ok"}`},
		{"number", `{method: 'POST', body: 42}`,
			`{"method": "POST", "contentType": "text/plain;charset=UTF-8", "apiKey": "", "body": "42"}`},
		{"delete without body", `{method: 'DELETE'}`,
			`{"method": "DELETE", "contentType": "", "apiKey": "", "body": ""}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := fetchCall(t, `
				const res = await fetch(args.base + '/echo', `+tt.init+`);
				const { method, contentType, apiKey, body } = await res.json();
				return { method, contentType, apiKey, body };
			`, urlArgs(s), executors.Limits{}, loopback, loopback)
			wantValue(t, res, err, tt.want)
		})
	}
}

func TestFetchRequestHeaders(t *testing.T) {
	s := newFetchServer(t)
	res, err := fetchCall(t, `
		const plain = await (await fetch(args.base + '/echo?q=1')).json();
		const pairs = await (await fetch(args.base + '/echo', {headers: [['X-Multi', 'a'], ['x-multi', 'b'], ['User-Agent', 'mine/2'], ['Accept', 'application/json']]})).json();
		const multi = await fetch(args.base + '/headers');
		const picked = Object.fromEntries([...multi.headers].filter(([n]) => n.startsWith('x-')));
		const again = await (await fetch(args.base + '/echo', {headers: picked})).json();
		// A Response's headers as they are: this one has no Content-Length.
		const chunked = await fetch(args.base + '/bytes?n=4&chunked=1');
		const whole = await (await fetch(args.base + '/echo', {method: 'POST', headers: chunked.headers, body: '{}'})).json();
		let refused;
		try { await fetch(args.base + '/echo', {headers: multi.headers}) } catch (e) { refused = e.message }
		return [plain.userAgent, plain.accept, plain.query, pairs.multi, pairs.userAgent, pairs.accept, again.multi,
			whole.contentType, refused];
	`, urlArgs(s), executors.Limits{}, loopback, loopback)
	wantValue(t, res, err, `["toolcage-fetch/1", "*/*", "q=1", ["a", "b"], "mine/2", "application/json", ["one, two"],
		"text/plain; charset=utf-8", "fetch: the Content-Length header cannot be set by a tool"]`)
}

func TestFetchResponseHeaders(t *testing.T) {
	s := newFetchServer(t)
	res, err := fetchCall(t, `
		const res = await fetch(args.base + '/headers');
		const h = res.headers;
		const seen = [];
		h.forEach(function (value, name, hs) { seen.push(name + '=' + value + (hs === h && this.mark)); }, {mark: '!'});
		const iterated = [];
		for (const [name, value] of h) iterated.push(name);
		return {
			get: h.get('x-multi'), getUpper: h.get('X-REQUEST-ID'), absent: h.get('x-nope'),
			has: h.has('X-Multi'), hasNot: h.has('x-nope'),
			seen: seen.filter(s => s.startsWith('x-')),
			entries: [...h.entries()].filter(([n]) => n.startsWith('x-')),
			keys: [...h.keys()].filter(n => n.startsWith('x-')),
			values: [...h.values()].includes('abc-123'),
			iterated: iterated.filter(n => n.startsWith('x-')),
			fromEntries: Object.fromEntries(h)['x-request-id'],
			keysOfObject: Object.keys(h),
			tag: String(h),
			text: await res.text(),
		};
	`, urlArgs(s), executors.Limits{}, loopback, loopback)
	wantValue(t, res, err, `{"get": "one, two", "getUpper": "abc-123", "absent": null, "has": true, "hasNot": false,
		"seen": ["x-multi=one, two!", "x-request-id=abc-123!"],
		"entries": [["x-multi", "one, two"], ["x-request-id", "abc-123"]],
		"keys": ["x-multi", "x-request-id"], "values": true,
		"iterated": ["x-multi", "x-request-id"], "fromEntries": "abc-123", "keysOfObject": [],
		"tag": "[object Headers]", "text": "hello"}`)
}

func TestFetchNotFound(t *testing.T) {
	s := newFetchServer(t)
	res, err := fetchCall(t, `
		const res = await fetch(args.base + '/missing');
		return [res.ok, res.status, res.statusText, (await res.text()).trim()];
	`, urlArgs(s), executors.Limits{}, loopback, loopback)
	wantValue(t, res, err, `[false, 404, "Not Found", "no such thing"]`)
}

func TestFetchHead(t *testing.T) {
	s := newFetchServer(t)
	res, err := fetchCall(t, `
		const res = await fetch(args.base + '/bytes?n=5000', {method: 'HEAD'});
		return [res.status, res.headers.get('content-length'), await res.text()];
	`, urlArgs(s), executors.Limits{OutputBytes: 100}, loopback, loopback)
	wantValue(t, res, err, `[200, "5000", ""]`)
}

func TestFetchRedirects(t *testing.T) {
	s := newFetchServer(t)
	t.Run("followed within the allowlist", func(t *testing.T) {
		res, err := fetchCall(t, `
			const res = await fetch(args.base + '/redirect');
			return [res.status, res.redirected, res.url === args.base + '/json', (await res.json()).city];
		`, urlArgs(s), executors.Limits{}, loopback, loopback)
		wantValue(t, res, err, `[200, true, true, "Oslo"]`)
	})
	t.Run("refused to a host outside it", func(t *testing.T) {
		res, err := fetchCall(t, `
			try {
				await fetch(args.base + '/away?port=' + args.port);
				return 'fetched';
			} catch (e) {
				return [e instanceof TypeError, e.message];
			}
		`, urlArgs(s), executors.Limits{}, loopback, loopback)
		want := fmt.Sprintf(`[true, "fetch: network guard refused http://localhost:%s/json: host \"localhost\" is not in the allowed domains"]`, s.port())
		wantValue(t, res, err, want)
	})
}

// TestFetchRefused checks URLs the guard refuses up front: the promise
// rejects with a TypeError naming the reason, which the tool can catch,
// and an uncaught one fails the tool with its line.
func TestFetchRefused(t *testing.T) {
	for _, tt := range []struct {
		name, url, reason string
	}{
		{"domain not allowlisted", "https://evil.example.net/x", `host "evil.example.net" is not in the allowed domains`},
		{"metadata service", "http://169.254.169.254/latest/meta-data/", `host "169.254.169.254" is not in the allowed domains`},
		{"scheme", "file:///etc/passwd", `scheme "file" is not allowed`},
		{"userinfo", "https://user:pw@api.example.com/", "userinfo"},
		{"no URL", "", "no scheme"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := fetchCall(t, `
				try {
					await fetch(args.url);
					return 'fetched';
				} catch (e) {
					return [e instanceof TypeError, e.message];
				}
			`, fmt.Sprintf(`{"url": %q}`, tt.url), executors.Limits{}, []string{"api.example.com"}, nil)
			if err != nil || res.IsError {
				t.Fatalf("err = %v, res = %+v", err, res)
			}
			var got []any
			if err := json.Unmarshal(res.Value, &got); err != nil || len(got) != 2 {
				t.Fatalf("value = %s", res.Value)
			}
			msg, _ := got[1].(string)
			if got[0] != true || !strings.HasPrefix(msg, "fetch: network guard refused ") || !strings.Contains(msg, tt.reason) {
				t.Errorf("rejection = %s, want a TypeError naming %q", res.Value, tt.reason)
			}
			if strings.Contains(msg, "pw") {
				t.Errorf("message %q shows the password", msg)
			}
		})
	}
	t.Run("uncaught", func(t *testing.T) {
		res, err := fetchCall(t, "const a = 1;\nconst res = await fetch('https://evil.example.net/');\nreturn res.status",
			"", executors.Limits{}, []string{"api.example.com"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := `TypeError: fetch: network guard refused https://evil.example.net/: host "evil.example.net" is not in the allowed domains (line 2)`
		if !res.IsError || res.Error != want {
			t.Errorf("error = %q, want %q", res.Error, want)
		}
	})
	t.Run("no allowlist", func(t *testing.T) {
		res, err := fetchCall(t, "try { await fetch('https://example.com/') } catch (e) { return e.message }", "", executors.Limits{}, nil, nil)
		wantValue(t, res, err, `"fetch: network guard: allowed domains must not be empty"`)
	})
}

// TestFetchPrivateHosts checks that loopback is reached only through a
// host named in AllowPrivateHosts, refused up front for an IP literal and
// at dial time (after DNS) for a name.
func TestFetchPrivateHosts(t *testing.T) {
	s := newFetchServer(t)
	const code = `
		try {
			const res = await fetch(args.url);
			return ['fetched', res.status];
		} catch (e) {
			return [e.name, e.message];
		}`
	literal := fmt.Sprintf(`{"url": "http://127.0.0.1:%s/json"}`, s.port())
	name := fmt.Sprintf(`{"url": "http://localhost:%s/json"}`, s.port())
	for _, tt := range []struct {
		name             string
		args             string
		allowed, private []string
		want             string // the result's second element, or a part of it
	}{
		{"literal without private hosts", literal, loopback, nil, "is not in allow_private_hosts"},
		{"name without private hosts", name, []string{"localhost"}, nil, "network guard refused localhost:" + s.port() + ":"},
		{"literal allowed", literal, loopback, loopback, "200"},
		{"name allowed", name, []string{"localhost"}, []string{"localhost"}, "200"},
		{"private host not in the allowlist", literal, []string{"example.com"}, loopback, `host "127.0.0.1" is not in the allowed domains`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := fetchCall(t, code, tt.args, executors.Limits{}, tt.allowed, tt.private)
			if err != nil || res.IsError {
				t.Fatalf("err = %v, res = %+v", err, res)
			}
			var got []any
			if err := json.Unmarshal(res.Value, &got); err != nil || len(got) != 2 {
				t.Fatalf("value = %s", res.Value)
			}
			if fmt.Sprint(got[1]) == tt.want {
				return
			}
			if got[0] != "TypeError" || !strings.Contains(fmt.Sprint(got[1]), tt.want) {
				t.Errorf("result = %s, want %q", res.Value, tt.want)
			}
		})
	}
}

func TestFetchRequestLimit(t *testing.T) {
	s := newFetchServer(t)
	// Fetches args.n URLs one after another, each caught; refused URLs
	// count too.
	const code = `
		const out = [];
		for (let i = 0; i < args.n; i++) {
			const url = i % 2 ? args.base + '/json' : 'https://refused.example/';
			try {
				out.push((await fetch(url)).status);
			} catch (e) {
				out.push(e.name);
			}
		}
		return out.length`
	args := func(n int) string { return fmt.Sprintf(`{"base": %q, "n": %d}`, s.URL, n) }
	for _, tt := range []struct {
		name  string
		limit int
		n     int
	}{
		{"limit 3", 3, 3},
		{"default", 0, DefaultRequests},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lim := executors.Limits{Requests: tt.limit}
			res, err := fetchCall(t, code, args(tt.n), lim, loopback, loopback)
			wantValue(t, res, err, strconv.Itoa(tt.n))
			_, err = fetchCall(t, code, args(tt.n+1), lim, loopback, loopback)
			wantLimit(t, err, errdefs.LimitRequests)
		})
	}
	t.Run("cannot be caught", func(t *testing.T) {
		_, err := fetchCall(t, `
			await fetch(args.base + '/json');
			try { await fetch(args.base + '/json') } catch (e) { return 'caught ' + e }
			return 'went on'`, args(0), executors.Limits{Requests: 1}, loopback, loopback)
		wantLimit(t, err, errdefs.LimitRequests)
	})
	t.Run("in parallel", func(t *testing.T) {
		const all = "const r = await Promise.all(Array.from({length: args.n}, () => fetch(args.base + '/json'))); return r.map(x => x.status)"
		res, err := fetchCall(t, all, args(4), executors.Limits{Requests: 4}, loopback, loopback)
		wantValue(t, res, err, `[200, 200, 200, 200]`)
		_, err = fetchCall(t, all, args(5), executors.Limits{Requests: 4}, loopback, loopback)
		wantLimit(t, err, errdefs.LimitRequests)
	})
}

func TestFetchBodyLimit(t *testing.T) {
	s := newFetchServer(t)
	const limit = 1000
	const code = "const res = await fetch(args.base + '/bytes?n=' + args.n + args.extra); return (await res.text()).length"
	for _, extra := range []string{"", "&chunked=1"} {
		name := "content-length"
		if extra != "" {
			name = "chunked"
		}
		t.Run(name, func(t *testing.T) {
			args := func(n int) string { return fmt.Sprintf(`{"base": %q, "n": %d, "extra": %q}`, s.URL, n, extra) }
			res, err := fetchCall(t, code, args(limit), executors.Limits{OutputBytes: limit}, loopback, loopback)
			wantValue(t, res, err, strconv.Itoa(limit))
			_, err = fetchCall(t, code, args(limit+1), executors.Limits{OutputBytes: limit}, loopback, loopback)
			wantLimit(t, err, errdefs.LimitOutput)
		})
	}
	t.Run("default 1 MiB", func(t *testing.T) {
		args := func(n int) string { return fmt.Sprintf(`{"base": %q, "n": %d, "extra": ""}`, s.URL, n) }
		res, err := fetchCall(t, code, args(DefaultOutputBytes), executors.Limits{}, loopback, loopback)
		wantValue(t, res, err, strconv.Itoa(DefaultOutputBytes))
		_, err = fetchCall(t, code, args(DefaultOutputBytes+1), executors.Limits{}, loopback, loopback)
		wantLimit(t, err, errdefs.LimitOutput)
	})
	t.Run("not read past the limit", func(t *testing.T) {
		start := time.Now()
		_, err := fetchCall(t, "try { await fetch(args.base + '/stream') } catch (e) { return 'caught' }; return 'read'",
			fmt.Sprintf(`{"base": %q}`, s.URL), executors.Limits{OutputBytes: 64 << 10}, loopback, loopback)
		wantLimit(t, err, errdefs.LimitOutput)
		if took := time.Since(start); took > slack {
			t.Errorf("took %v", took)
		}
		select {
		case <-s.streamDone:
		case <-time.After(5 * time.Second):
			t.Fatal("the server is still writing: the client kept reading")
		}
		if n := s.streamed.Load(); n >= 32<<20 {
			t.Errorf("the server wrote %d bytes: the body was read past the limit", n)
		}
	})
}

func TestFetchTimeout(t *testing.T) {
	s := newFetchServer(t)
	const limit = 200 * time.Millisecond
	start := time.Now()
	_, err := fetchCall(t, "try { await fetch(args.base + '/slow') } catch (e) { return 'caught ' + e }; return 'done'",
		urlArgs(s), executors.Limits{Timeout: limit}, loopback, loopback)
	took := time.Since(start)
	wantLimit(t, err, errdefs.LimitTimeout)
	if took < limit || took > limit+slack {
		t.Errorf("stopped after %v, want about %v", took, limit)
	}
	select {
	case <-s.slowCancelled:
	case <-time.After(5 * time.Second):
		t.Error("the request in flight was not cancelled")
	}
}

func TestFetchContextCancel(t *testing.T) {
	s := newFetchServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := fetchCallCtx(ctx, t, "await fetch(args.base + '/slow'); return 'done'", urlArgs(s), executors.Limits{}, loopback, loopback)
	if errdefs.CodeOf(err) != errdefs.Unavailable {
		t.Fatalf("err = %v, want unavailable", err)
	}
	select {
	case <-s.slowCancelled:
	case <-time.After(5 * time.Second):
		t.Error("the request in flight was not cancelled")
	}
}

// TestFetchRejections checks that fetch never throws: a bad request
// rejects its promise with a TypeError, and nothing is sent.
func TestFetchRejections(t *testing.T) {
	s := newFetchServer(t)
	for _, tt := range []struct {
		name, init, want string
	}{
		{"method", `{method: 'TRACE'}`, `fetch: method "TRACE" is not allowed (GET, POST, PUT, PATCH, DELETE or HEAD)`},
		{"connect", `{method: 'connect'}`, `fetch: method "connect" is not allowed (GET, POST, PUT, PATCH, DELETE or HEAD)`},
		{"GET with a body", `{body: 'x'}`, "fetch: a GET request cannot have a body"},
		{"HEAD with a body", `{method: 'HEAD', body: {}}`, "fetch: a HEAD request cannot have a body"},
		{"Host header", `{headers: {host: 'internal.example'}}`, "fetch: the Host header cannot be set by a tool"},
		{"header injection", `{headers: {'X-A': 'a\r\nX-B: b'}}`, "fetch: header X-A has a value with control characters (CR, LF or NUL)"},
		{"header name", `{headers: {'bad name': 'v'}}`, `fetch: header name "bad name" is not valid`},
		{"header pairs", `{headers: [['a']]}`, "fetch: headers[0] must be a [name, value] pair"},
		{"init", `'GET'`, "fetch: init must be an object"},
		{"body BigInt", `{method: 'POST', body: {n: 1n}}`, "BigInt"},
		{"throwing toString", `{method: {toString() { throw new RangeError('nope') }}}`, "nope"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := fetchCall(t, `
				let p;
				try {
					p = fetch(args.base + '/echo', `+tt.init+`);
				} catch (e) {
					return 'threw ' + e;
				}
				try {
					await p;
					return 'fetched';
				} catch (e) {
					return [p instanceof Promise, e.message];
				}
			`, urlArgs(s), executors.Limits{}, loopback, loopback)
			if err != nil || res.IsError {
				t.Fatalf("err = %v, res = %+v", err, res)
			}
			var got []any
			if err := json.Unmarshal(res.Value, &got); err != nil || len(got) != 2 {
				t.Fatalf("value = %s", res.Value)
			}
			if got[0] != true || !strings.Contains(fmt.Sprint(got[1]), tt.want) {
				t.Errorf("result = %s, want a rejection with %q", res.Value, tt.want)
			}
		})
	}
}

func TestFetchBody(t *testing.T) {
	s := newFetchServer(t)
	res, err := fetchCall(t, `
		const out = {};
		const bad = await fetch(args.base + '/headers');
		try { await bad.json() } catch (e) { out.json = [e instanceof SyntaxError, e.name] }
		out.usedAfterJson = bad.bodyUsed;
		try { await bad.text() } catch (e) { out.again = [e instanceof TypeError, e.message] }
		const good = await fetch(args.base + '/json');
		out.before = good.bodyUsed;
		const p = good.text();
		out.promise = p instanceof Promise;
		out.text = (await p).length;
		try { good.text.call({}) } catch (e) { out.foreign = e.message }
		return out;
	`, urlArgs(s), executors.Limits{}, loopback, loopback)
	wantValue(t, res, err, `{"json": [true, "SyntaxError"], "usedAfterJson": true,
		"again": [true, "fetch: Response.text: body has already been used"], "before": false, "promise": true, "text": 52,
		"foreign": "fetch: Response.text called on an object that is not a Response"}`)
}

func TestFetchConcurrent(t *testing.T) {
	s := newFetchServer(t)
	res, err := fetchCall(t, `
		const paths = ['/json', '/missing', '/redirect', '/headers', '/echo'];
		const all = await Promise.all(paths.map(p => fetch(args.base + p).then(r => r.status)));
		const settled = await Promise.allSettled([fetch('https://refused.example/'), fetch(args.base + '/json')]);
		return [all, settled.map(s => s.status)];
	`, urlArgs(s), executors.Limits{}, loopback, loopback)
	wantValue(t, res, err, `[[200, 404, 200, 200, 200], ["rejected", "fulfilled"]]`)
}

// TestFetchNotAwaited checks that a call ends when its own promise does,
// with a fetch still in flight.
func TestFetchNotAwaited(t *testing.T) {
	s := newFetchServer(t)
	start := time.Now()
	res, err := fetchCall(t, "fetch(args.base + '/slow'); return (await fetch(args.base + '/slow-started')).text()",
		urlArgs(s), executors.Limits{}, loopback, loopback)
	wantValue(t, res, err, `"started"`)
	if took := time.Since(start); took > slack {
		t.Errorf("took %v", took)
	}
	select {
	case <-s.slowCancelled:
	case <-time.After(5 * time.Second):
		t.Error("the request left in flight was not cancelled")
	}
}

// TestFetchRedactsSecrets checks that rejection messages show no query
// and no userinfo, for a refused URL and for a network failure.
func TestFetchRedactsSecrets(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close() // nothing listens on its port any more
	for _, tt := range []struct {
		name, url, want string
	}{
		{"refused", "https://evil.example.net/v1%20x?key=SECRET", "fetch: network guard refused https://evil.example.net/v1%20x?redacted: "},
		{"connection refused", dead.URL + "/v1%25?key=SECRET", "fetch: GET " + dead.URL + "/v1%25?redacted: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := fetchCall(t, "try { await fetch(args.url) } catch (e) { return e.message }",
				fmt.Sprintf(`{"url": %q}`, tt.url), executors.Limits{}, loopback, loopback)
			if err != nil || res.IsError {
				t.Fatalf("err = %v, res = %+v", err, res)
			}
			var msg string
			if err := json.Unmarshal(res.Value, &msg); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(msg, tt.want) || strings.Contains(msg, "SECRET") {
				t.Errorf("message = %q, want it to start %q and hide the key", msg, tt.want)
			}
		})
	}
}

// Example_fetch is the seed's fetch_weather tool, against a stub API.
func Example_fetch() {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/current.json" || r.URL.Query().Get("key") != "k-123" {
			http.Error(w, `{"error": "bad key"}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"location": {"name": %q, "country": "Norway"},
			"current": {"temp_c": 4.5, "humidity": 81, "wind_kph": 14.4, "condition": {"text": "Light rain"}}}`,
			r.URL.Query().Get("q"))
	}))
	defer api.Close()

	e := New(Config{Timeout: 5 * time.Second})
	res, err := e.Execute(context.Background(), &executors.Request{
		Tool:        "fetch_weather",
		Args:        json.RawMessage(fmt.Sprintf(`{"city": "Tromsø", "api": %q}`, api.URL)),
		Permissions: []string{"network"},
		JS: &executors.JSCall{
			Code: `
				const apiKey = 'k-123';
				const url = args.api + '/v1/current.json?key=' + apiKey + '&q=' + utils.urlEncode(args.city);
				const response = await fetch(url);
				if (!response.ok) return { error: 'API error: ' + response.status };

				const data = await response.json();
				return {
					location: data.location.name,
					country: data.location.country,
					temp_c: data.current.temp_c,
					condition: data.current.condition.text,
					humidity: data.current.humidity,
					wind_kph: data.current.wind_kph,
				};`,
			AllowedDomains:    []string{"127.0.0.1"},
			AllowPrivateHosts: []string{"127.0.0.1"}, // the stub runs on loopback
		},
	})
	if err != nil {
		panic(err)
	}
	os.Stdout.Write(res.Value)
	// Output:
	// {"location":"Tromsø","country":"Norway","temp_c":4.5,"condition":"Light rain","humidity":81,"wind_kph":14.4}
}
