package webhook

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestCheckURL(t *testing.T) {
	for _, tt := range []struct {
		raw          string
		allowPrivate bool
		wantErr      string
	}{
		{"https://hooks.example.com/toolcage", false, ""},
		{"https://hooks.example.com:8443/x?team=ops", false, ""},
		{"http://127.0.0.1:9000/hook", true, ""},
		{"http://localhost:9000/hook", true, ""},
		{"http://[::1]:9000/hook", true, ""},
		{"https://127.0.0.1/hook", true, ""},
		{"http://127.0.0.1:9000/hook", false, "webhook_allow_private"},
		{"https://localhost/hook", false, "webhook_allow_private"},
		{"http://hooks.example.com/toolcage", false, "plain http"},
		{"http://hooks.example.com/toolcage", true, "plain http"},
		{"http://10.0.0.5/hook", true, "plain http"},
		{"ftp://hooks.example.com/", false, "scheme"},
		{"hooks.example.com/toolcage", false, "scheme"},
		{"https:///path", false, "no host"},
		{"https://bob:hunter2@hooks.example.com/", false, "credentials"},
		{"https://hooks.example.com/#frag", false, "fragment"},
		{"https://hooks.exa mple.com/", false, "not a URL"},
	} {
		_, err := CheckURL(tt.raw, tt.allowPrivate)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tt.raw, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: error %v, want %q", tt.raw, err, tt.wantErr)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the error shows the password: %v", tt.raw, err)
		}
	}
}

func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"https://hooks.example.com/x", "http://127.0.0.1:1/", "http://[::1]/", "http://localhost./",
		"http://127.1/", "http://0x7f.1/", "https://u@h/", "http://LOCALHOST/", "http://a.localhost/", "//x", ""} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, raw string, allowPrivate bool) {
		u, err := CheckURL(raw, allowPrivate)
		if err != nil {
			return
		}
		if u.Scheme != "https" && !(u.Scheme == "http" && isLoopbackHost(u.Hostname())) {
			t.Fatalf("%q accepted with scheme %s", raw, u.Scheme)
		}
		if isLoopbackHost(u.Hostname()) && !allowPrivate {
			t.Fatalf("%q: loopback accepted without allowPrivate", raw)
		}
		if u.User != nil {
			t.Fatalf("%q: credentials accepted", raw)
		}
	})
}

// hook is a webhook receiver on 127.0.0.1.
type hook struct {
	srv  *httptest.Server
	mu   sync.Mutex
	got  []map[string]any
	ua   []string
	wait chan struct{} // when set, each request waits for it (or for the client to go)
}

func newHook(t *testing.T) *hook {
	h := &hook{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.wait != nil {
			select {
			case <-h.wait:
			case <-r.Context().Done():
				return
			}
		}
		b, _ := io.ReadAll(r.Body)
		var v map[string]any
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(b, &v) != nil {
			http.Error(w, "bad announcement", http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		h.got = append(h.got, v)
		h.ua = append(h.ua, r.Header.Get("User-Agent"))
		h.mu.Unlock()
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hook) received() []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]map[string]any(nil), h.got...)
}

func waitCounts(t *testing.T, n *Notifier, delivered, failed int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		d, f := n.Counts()
		if d == delivered && f == failed {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivered %d, failed %d; want %d, %d", d, f, delivered, failed)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestNotifierDelivers(t *testing.T) {
	h := newHook(t)
	n, err := New(Config{URL: h.srv.URL + "/hook", Timeout: 5 * time.Second, AllowPrivate: true, UserAgent: "toolcage/test"}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	for i := range 3 {
		n.Announce(map[string]any{"event": "approval.pending", "n": i})
	}
	waitCounts(t, n, 3, 0)
	got := h.received()
	for i, v := range got {
		if v["event"] != "approval.pending" || v["n"] != float64(i) || h.ua[i] != "toolcage/test" {
			t.Errorf("announcement %d: %v (%s)", i, v, h.ua[i])
		}
	}
}

// TestNotifierPrivateRefused: a loopback URL needs AllowPrivate at New;
// and a name CheckURL does not take for loopback ("localhost." with its
// root dot) but that resolves to 127.0.0.1 is refused by the network
// guard when it dials, so nothing reaches the hook listening there.
func TestNotifierPrivateRefused(t *testing.T) {
	if _, err := New(Config{URL: "http://127.0.0.1:1/", Timeout: time.Second}, nil); err == nil || !strings.Contains(err.Error(), "webhook_allow_private") {
		t.Errorf("loopback without allow: %v", err)
	}
	h := newHook(t)
	port := h.srv.URL[strings.LastIndexByte(h.srv.URL, ':')+1:]
	var logs strings.Builder
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	n, err := New(Config{URL: "https://localhost.:" + port + "/hook", Timeout: time.Second}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	n.Announce(map[string]any{"event": "x"})
	waitCounts(t, n, 0, 1)
	if len(h.received()) != 0 {
		t.Error("the hook on a private address got the announcement")
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "not delivered") || !strings.Contains(logs.String(), "private") {
		t.Errorf("log: %s", logs.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestNotifierSlowHook: a hook that never answers costs one timeout per
// announcement on the delivery goroutine; Announce itself never waits,
// and a full queue drops rather than blocks.
func TestNotifierSlowHook(t *testing.T) {
	h := newHook(t)
	h.wait = make(chan struct{})
	n, err := New(Config{URL: h.srv.URL, Timeout: 100 * time.Millisecond, AllowPrivate: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	start := time.Now()
	for range queueSize + 10 {
		n.Announce(map[string]any{"event": "x"})
	}
	if d := time.Since(start); d > 50*time.Millisecond {
		t.Errorf("Announce took %s with a hook that never answers", d)
	}
	// The first POST is taken off the queue at once; the queue then fills
	// and the rest (at least 9) are dropped.
	if _, f := n.Counts(); f < 9 {
		t.Errorf("%d dropped, want at least 9", f)
	}
	close(h.wait) // the hook answers again: later announcements get through
	n.Close()
	n2, err := New(Config{URL: h.srv.URL, Timeout: 100 * time.Millisecond, AllowPrivate: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n2.Close()
	n2.Announce(map[string]any{"event": "y"})
	waitCounts(t, n2, 1, 0)
}

func TestNotifierNon2xx(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://elsewhere.example/", http.StatusFound)
	}))
	defer srv.Close()
	n, err := New(Config{URL: srv.URL, Timeout: time.Second, AllowPrivate: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	n.Announce(map[string]any{"event": "x"})
	waitCounts(t, n, 0, 1) // a redirect is not followed, and not delivery
}
