// Package egress is the daemon's egress proxy for HTTP tools: the place
// where a call's secrets are put into its request, so that they never
// enter the executor.
//
// The daemon renders an HTTP tool's request twice: once with the secret
// values (the real request, kept here) and once with a random stand-in
// token per secret (what the executor gets). The executor sends its
// request to the proxy, in absolute form, with the call's grant token in
// executors.EgressTokenHeader. The proxy checks that the first request of
// the grant is the rendered one (method, URL and body as rendered with
// tokens), replaces it by the real one, dials through the network guard
// of the tool's allowlist and answers with the API's response, in which
// the secret values are redacted: an API that echoes a key does not hand
// it to the executor either. Later requests of the grant are the
// executor's redirects; they go out as sent, through the same guard.
//
// A grant is worth nothing without its token (128 random bits), lives no
// longer than its call, and serves at most 1+netguard.MaxRedirects requests.
//
// The proxy listens on 127.0.0.1, which an executor process sharing the
// host's network reaches, and may serve further listeners (Serve): the
// Unix socket the docker runner binds into containers that have no
// network of their own.
package egress

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/policy/netguard"
)

// Grant is what the proxy needs for one call.
type Grant struct {
	// Real is the request with the secret values; Rendered is the same
	// request as the executor has it, with stand-in tokens.
	Real, Rendered *executors.HTTPCall
	// Redact removes the call's secret values from response bytes.
	Redact func([]byte) []byte
	// Deadline ends the grant even if the caller never revokes it.
	Deadline time.Time
}

type grant struct {
	Grant
	requests int
}

// Proxy is the egress proxy. It is safe for concurrent use.
type Proxy struct {
	ln     net.Listener
	srv    *http.Server
	guards *netguard.Cache
	log    *slog.Logger

	mu     sync.Mutex
	grants map[string]*grant
}

// Listen starts a proxy on a fresh port of 127.0.0.1. Its dials go
// through the guards of guards.
func Listen(guards *netguard.Cache, log *slog.Logger) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	p := &Proxy{ln: ln, guards: guards, log: log, grants: map[string]*grant{}}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 1 << 20,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	go p.srv.Serve(ln)
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Serve serves the proxy on ln too (a Unix socket for containers), until
// Close, which closes ln.
func (p *Proxy) Serve(ln net.Listener) { go p.srv.Serve(ln) }

// Close stops the proxy on every listener; requests in flight are cut off.
func (p *Proxy) Close() error { return p.srv.Close() }

// Add registers a grant and returns its token and the function that ends
// it (call it when the call is done).
func (p *Proxy) Add(g Grant) (token string, revoke func()) {
	token = NewToken()
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	for t, old := range p.grants { // grants whose calls never revoked them
		if now.After(old.Deadline) {
			delete(p.grants, t)
		}
	}
	p.grants[token] = &grant{Grant: g}
	return token, func() {
		p.mu.Lock()
		delete(p.grants, token)
		p.mu.Unlock()
	}
}

// Len is the number of live grants.
func (p *Proxy) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.grants)
}

// NewToken returns 128 random bits in hex: a grant's token, and the
// stand-in for a secret in a rendered request (letters and digits only,
// so no escaping of any template context changes it).
func NewToken() string {
	var b [16]byte
	rand.Read(b[:])
	return "tcx" + hex.EncodeToString(b[:])
}

// take finds a grant and counts one request on it; first reports whether
// it is the grant's first request.
func (p *Proxy) take(token string) (g *grant, first bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	g = p.grants[token]
	if g == nil || time.Now().After(g.Deadline) {
		return nil, false, errors.New("no such call: the token is unknown or its call has ended")
	}
	if g.requests > netguard.MaxRedirects {
		return nil, false, fmt.Errorf("the call has made its %d requests", netguard.MaxRedirects+1)
	}
	g.requests++
	return g, g.requests == 1, nil
}

// maxRequestBody bounds what the proxy reads of an executor's request
// body; rendered bodies are far smaller.
const maxRequestBody = 8 << 20

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g, first, err := p.take(r.Header.Get(executors.EgressTokenHeader))
	if err != nil {
		fail(w, http.StatusForbidden, errdefs.PolicyDenied, err.Error())
		return
	}
	if !r.URL.IsAbs() {
		fail(w, http.StatusBadRequest, errdefs.InvalidRequest, "the request must name an absolute URL")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody+1))
	if err != nil || len(body) > maxRequestBody {
		fail(w, http.StatusBadRequest, errdefs.InvalidRequest, "the request body is unreadable or too large")
		return
	}
	out, err := p.outgoing(r, body, g, first)
	if err != nil {
		g.fail(w, http.StatusForbidden, errdefs.PolicyDenied, err.Error())
		return
	}
	entry, err := p.guards.Get(g.Real.AllowedDomains, g.Real.AllowPrivateHosts)
	if err != nil {
		g.fail(w, http.StatusForbidden, errdefs.PolicyDenied, err.Error())
		return
	}
	if _, err := entry.Guard.CheckURL(out.URL.String()); err != nil {
		g.fail(w, http.StatusForbidden, errdefs.PolicyDenied, err.Error())
		return
	}
	// A follow-up (the executor following a redirect) stays on the first
	// request's port unless the allowlist names the new one.
	if !first {
		start, err := url.Parse(g.Real.URL)
		if err == nil {
			err = entry.Guard.CheckPortMove(start, out.URL)
		}
		if err != nil {
			g.fail(w, http.StatusForbidden, errdefs.PolicyDenied, err.Error())
			return
		}
	}
	ctx, cancel := context.WithDeadline(r.Context(), g.Deadline)
	defer cancel()
	out = out.WithContext(ctx)
	// Redirects go back to the executor, which checks and follows them.
	client := &http.Client{Transport: entry.Client.Transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(out)
	if err != nil {
		var nd *netguard.DeniedError
		if errors.As(err, &nd) {
			g.fail(w, http.StatusForbidden, errdefs.PolicyDenied, nd.Reason)
			return
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		g.fail(w, http.StatusBadGateway, "unreachable", err.Error())
		return
	}
	defer resp.Body.Close()
	p.relay(w, resp, g)
}

// outgoing builds the request the proxy sends: for the grant's first
// request, the real one in place of the rendered one it must be; later,
// the executor's request as it is.
func (p *Proxy) outgoing(r *http.Request, body []byte, g *grant, first bool) (*http.Request, error) {
	u := r.URL
	hdr := r.Header.Clone()
	hdr.Del(executors.EgressTokenHeader)
	for _, h := range []string{"Connection", "Proxy-Connection", "Keep-Alive", "Te", "Trailer", "Upgrade", "Proxy-Authorization"} {
		hdr.Del(h)
	}
	if first {
		rendered, err := url.Parse(g.Rendered.URL)
		if err != nil {
			return nil, fmt.Errorf("rendered URL: %w", err)
		}
		if !sameTarget(u, rendered) || !bytes.Equal(body, g.Rendered.Body) || !sameMethod(r.Method, g.Rendered.Method) {
			return nil, errors.New("the request is not the one the daemon rendered for this call")
		}
		if u, err = url.Parse(g.Real.URL); err != nil {
			return nil, fmt.Errorf("real URL: %w", err)
		}
		body = g.Real.Body
		for k, v := range g.Rendered.Headers {
			ck := http.CanonicalHeaderKey(k)
			if hdr.Get(ck) != v {
				return nil, fmt.Errorf("the %s header is not the one the daemon rendered", ck)
			}
			hdr.Set(ck, g.Real.Headers[k])
		}
	}
	out, err := http.NewRequest(r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if len(body) == 0 {
		out.Body, out.ContentLength = http.NoBody, 0
	}
	out.Header = hdr
	return out, nil
}

func sameTarget(a, b *url.URL) bool {
	return a.Scheme == b.Scheme && a.Host == b.Host && a.RequestURI() == b.RequestURI()
}

func sameMethod(got, rendered string) bool {
	if strings.TrimSpace(rendered) == "" {
		rendered = http.MethodGet
	}
	return strings.EqualFold(got, strings.TrimSpace(rendered))
}

// relay writes the API's response back, its body bounded by the call's
// limit (one byte more, so the executor sees it was over) and with the
// secret values redacted.
func (p *Proxy) relay(w http.ResponseWriter, resp *http.Response, g *grant) {
	limit := g.Real.MaxResponseBytes
	if limit <= 0 {
		limit = 1 << 20
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil && int64(len(data)) <= limit {
		g.fail(w, http.StatusBadGateway, "unreachable", err.Error())
		return
	}
	data = g.Redact(data)
	h := w.Header()
	for k, vs := range resp.Header {
		switch k {
		case "Connection", "Keep-Alive", "Transfer-Encoding", "Trailer", "Upgrade", "Content-Length", "Proxy-Connection":
			continue
		}
		if resp.Uncompressed && k == "Content-Encoding" {
			continue
		}
		for _, v := range vs {
			h.Add(k, string(g.Redact([]byte(v))))
		}
	}
	h.Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(resp.StatusCode)
	w.Write(data)
}

// fail answers with the proxy's own error, which the executor tells from
// the API's by the error header.
func fail(w http.ResponseWriter, status int, code errdefs.Code, msg string) {
	w.Header().Set(executors.EgressErrorHeader, string(code)+": "+sanitize(msg))
	w.WriteHeader(status)
}

// fail is fail with the grant's secret values redacted from msg: an error
// about the real request (a refused URL, a failed dial) may quote them.
func (g *grant) fail(w http.ResponseWriter, status int, code errdefs.Code, msg string) {
	fail(w, status, code, string(g.Redact([]byte(msg))))
}

// sanitize keeps an error message fit for a header value.
func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c < ' ' || c == 0x7f {
			b[i] = ' '
		}
	}
	if len(b) > 512 {
		b = b[:512]
	}
	return string(b)
}
