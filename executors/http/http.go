// Package httpexec is the HTTP executor: it sends one rendered HTTP request
// (executors.HTTPCall) for a tool and returns the response as JSON.
//
// The package lives in executors/http but is named httpexec so that it does
// not shadow net/http where both are imported.
//
// Every request goes through the network guard (netguard.Guard) built from
// the call's own AllowedDomains and AllowPrivateHosts: the URL is checked
// before anything is sent, every redirect is checked again, and the dialer
// checks the address it actually connects to after DNS resolution, so a
// tool cannot reach the cloud metadata service or internal addresses by any
// spelling of the URL, by redirect, or by DNS rebinding. Environment proxies
// are ignored.
//
// # Result value
//
// A response of any status gives
//
//	{"status": 200, "headers": {"content-type": "application/json", ...}, "body": ...}
//
// where headers has lowercased names, one string each (repeated headers
// joined with ", "), and body is
//
//   - the response JSON itself when the body parses as JSON, whatever the
//     Content-Type says (numbers keep their exact digits; a UTF-8 BOM is
//     skipped);
//   - {"data": "<text>"} for any other UTF-8 text, including the empty body
//     of HEAD, 204 and 304 responses;
//   - {"data_base64": "<standard base64>"} for bodies that are not UTF-8 or
//     contain NUL bytes.
//
// A status of 400 or more sets Result.IsError, with Error "HTTP 404 Not
// Found" (the code and Go's standard text, never the server's reason
// phrase), and still returns the value. A request that could not be made
// (connection refused, TLS failure, unknown host) is a Result with IsError
// set, Error "http: <method> <redacted URL>: <cause>" and a null value.
//
// # Request
//
// Method defaults to GET and is upper-cased. Headers are sent as given,
// plus User-Agent "toolcage-http/1" when none is set and Content-Type
// "application/json" when the body is JSON and none is set. Go's transport
// asks for gzip and decodes it transparently unless the call sets its own
// Accept-Encoding.
//
// # Errors
//
//   - policy_denied: the guard refused the URL, a redirect or the address;
//     the allowlist is empty or malformed; the Host header or CONNECT
//     method was asked for (they would let a call reach other virtual
//     hosts or tunnel through an allowlisted proxy); or a hop-by-hop
//     header was set.
//   - invalid_request: no HTTP call, or a malformed method or header.
//   - timeout (limit "timeout"): the whole exchange, body included, took
//     longer than Limits.Timeout (default Config.Timeout).
//   - limit_exceeded (limit "output"): the body is larger than
//     MaxResponseBytes (the call's, else Config.MaxResponseBytes). The body
//     is never read past that: at most max+1 bytes are read, or none when
//     Content-Length already says too much, and the connection is closed.
//     Also when Limits.OutputBytes is set and the encoded value exceeds it.
//   - unavailable: ctx was cancelled.
//
// Limits.MemoryBytes and Limits.Requests do not apply: a call is one request
// plus at most netguard.MaxRedirects redirects.
package httpexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/net/http/httpguts"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/policy/netguard"
)

// Defaults used when Config and the call leave a limit at zero.
const (
	DefaultTimeout          = 10 * time.Second
	DefaultMaxResponseBytes = 1_000_000
)

// userAgent is sent when the call sets no User-Agent.
const userAgent = "toolcage-http/1"

// Config holds the executor's defaults. A call's non-zero limits override
// them.
type Config struct {
	// Timeout bounds a whole call: connecting, TLS, redirects, headers and
	// the full body. Zero means DefaultTimeout; Limits.Timeout overrides it.
	Timeout time.Duration
	// MaxResponseBytes bounds the response body (after transparent gzip
	// decoding). Zero means DefaultMaxResponseBytes; HTTPCall.MaxResponseBytes
	// overrides it.
	MaxResponseBytes int64
}

// Executor runs HTTP tool calls. It is safe for concurrent use; guards and
// their connection pools are cached per allowlist.
type Executor struct {
	cfg    Config
	guards *netguard.Cache
}

// New returns an executor with cfg's defaults filled in.
func New(cfg Config) *Executor {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	return &Executor{cfg: cfg, guards: netguard.NewCache(guardCacheSize)}
}

// CloseIdleConnections closes the idle connections of every cached guard.
func (e *Executor) CloseIdleConnections() { e.guards.CloseIdleConnections() }

// Execute sends req.HTTP and returns the response; see the package comment
// for the value and the errors.
func (e *Executor) Execute(ctx context.Context, req *executors.Request) (*executors.Result, error) {
	if req == nil || req.HTTP == nil {
		return nil, errdefs.Errorf(errdefs.InvalidRequest, "http: request carries no HTTP call")
	}
	start := time.Now()
	call := req.HTTP
	timeout := req.Limits.Timeout
	if timeout <= 0 {
		timeout = e.cfg.Timeout
	}
	maxBody := call.MaxResponseBytes
	if maxBody <= 0 {
		maxBody = e.cfg.MaxResponseBytes
	}

	method, err := requestMethod(call.Method)
	if err != nil {
		return nil, err
	}
	entry, err := e.guards.Get(call.AllowedDomains, call.AllowPrivateHosts)
	if err != nil {
		return nil, errdefs.Errorf(errdefs.PolicyDenied, "http: %w", err)
	}
	u, err := entry.Guard.CheckURL(call.URL)
	if err != nil {
		return nil, errdefs.Errorf(errdefs.PolicyDenied, "http: %w", err)
	}
	header, err := requestHeader(call.Headers, call.Body)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, stopError(err)
	}

	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var body io.Reader
	if len(call.Body) > 0 {
		body = bytes.NewReader(call.Body)
	}
	hreq, err := http.NewRequestWithContext(callCtx, method, call.URL, body)
	if err != nil {
		return nil, errdefs.Errorf(errdefs.InvalidRequest, "http: %v", err)
	}
	hreq.URL = u // the URL the guard checked, parsed the same way
	hreq.Header = header

	client := entry.Client
	if call.Egress != nil {
		// The daemon's proxy dials and guards the address; the URL and
		// every redirect are still checked here first.
		client = &http.Client{Transport: &egressTransport{egress: *call.Egress}, CheckRedirect: entry.Guard.CheckRedirect}
	}
	resp, err := client.Do(hreq)
	if err != nil {
		return e.failed(ctx, callCtx, err, method, u, timeout)
	}
	defer resp.Body.Close()

	data, truncated, err := readBody(resp, method, maxBody, call.TruncateBody)
	if err != nil {
		var xe *errdefs.Error
		if errors.As(err, &xe) {
			return nil, xe
		}
		return e.failed(ctx, callCtx, err, method, u, timeout)
	}
	value, err := encodeResponse(resp, data, truncated)
	if err != nil {
		return nil, errdefs.Errorf(errdefs.Internal, "http: encode result: %v", err)
	}
	if limit := req.Limits.OutputBytes; limit > 0 && int64(len(value)) > limit {
		return nil, errdefs.LimitError(errdefs.LimitOutput, "http: result is %d bytes, over the %d-byte output limit", len(value), limit)
	}
	res := &executors.Result{Value: value, OutputBytes: int64(len(value))}
	if resp.StatusCode >= 400 {
		res.IsError = true
		res.Error = statusError(resp.StatusCode)
	}
	res.Duration = time.Since(start)
	return res, nil
}

// readBody reads at most maxBody+1 bytes of the body and refuses a body
// larger than maxBody without reading the rest: the caller's Close then
// drops the connection instead of draining it. With truncate, such a
// body is cut at maxBody (back to a whole UTF-8 character when it is
// text) and truncated is set instead.
func readBody(resp *http.Response, method string, maxBody int64, truncate bool) (data []byte, truncated bool, err error) {
	if method == http.MethodHead {
		return nil, false, nil
	}
	if resp.ContentLength > maxBody && !truncate {
		return nil, false, errdefs.LimitError(errdefs.LimitOutput,
			"http: response body is %d bytes (Content-Length), over the %d-byte limit", resp.ContentLength, maxBody)
	}
	var buf bytes.Buffer
	if resp.ContentLength > 0 {
		buf.Grow(int(min(resp.ContentLength, maxBody)) + 1)
	}
	n, err := buf.ReadFrom(io.LimitReader(resp.Body, maxBody+1))
	if n > maxBody {
		if !truncate {
			return nil, false, errdefs.LimitError(errdefs.LimitOutput, "http: response body is over the %d-byte limit", maxBody)
		}
		b := buf.Bytes()[:maxBody]
		for cut := 0; cut < utf8.UTFMax && len(b) > 0 && !utf8.Valid(b); cut++ {
			b = b[:len(b)-1]
		}
		if !utf8.Valid(b) {
			b = buf.Bytes()[:maxBody]
		}
		return b, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	return buf.Bytes(), false, nil
}

// failed turns an error from sending the request or reading the body into
// the call's outcome: a guard refusal, a timeout, a cancellation, or else
// a tool-level failure (the API could not be reached).
func (e *Executor) failed(parent, callCtx context.Context, err error, method string, u *url.URL, timeout time.Duration) (*executors.Result, error) {
	var nd *netguard.DeniedError
	if errors.As(err, &nd) {
		return nil, errdefs.Errorf(errdefs.PolicyDenied, "http: %w", nd)
	}
	if perr := parent.Err(); perr != nil {
		return nil, stopError(perr)
	}
	if callCtx.Err() != nil {
		return nil, errdefs.LimitError(errdefs.LimitTimeout, "http: call exceeded its %v time limit", timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return &executors.Result{
		Value:   []byte("null"),
		IsError: true,
		Error:   fmt.Sprintf("http: %s %s: %v", method, netguard.RedactURL(u.String()), err),
	}, nil
}

// stopError maps the caller's ctx error to the error a stopped call returns.
func stopError(err error) *errdefs.Error {
	if errors.Is(err, context.DeadlineExceeded) {
		return errdefs.LimitError(errdefs.LimitTimeout, "http: call stopped: %v", err)
	}
	return errdefs.Errorf(errdefs.Unavailable, "http: call stopped: %v", err)
}

// statusError is Result.Error for a status of 400 or more.
func statusError(code int) string {
	if text := http.StatusText(code); text != "" {
		return fmt.Sprintf("HTTP %d %s", code, text)
	}
	return fmt.Sprintf("HTTP %d", code)
}

// requestMethod validates and upper-cases a method; "" means GET.
func requestMethod(m string) (string, error) {
	m = strings.ToUpper(strings.TrimSpace(m))
	if m == "" {
		return http.MethodGet, nil
	}
	if !httpguts.ValidHeaderFieldName(m) { // a method is an HTTP token
		return "", errdefs.Errorf(errdefs.InvalidRequest, "http: method %q is not a valid HTTP method", m)
	}
	if m == http.MethodConnect {
		return "", errdefs.Errorf(errdefs.PolicyDenied, "http: the CONNECT method is not allowed (it opens tunnels)")
	}
	return m, nil
}

// requestHeader builds the request header from the call's headers, adding
// a User-Agent and, for a JSON body without one, a JSON Content-Type.
func requestHeader(in map[string]string, body []byte) (http.Header, error) {
	h := make(http.Header, len(in)+2)
	for k, v := range in {
		if !httpguts.ValidHeaderFieldName(k) {
			return nil, errdefs.Errorf(errdefs.InvalidRequest, "http: header name %q is not valid", k)
		}
		if !httpguts.ValidHeaderFieldValue(v) {
			return nil, errdefs.Errorf(errdefs.InvalidRequest, "http: header %s has a value with control characters (CR, LF or NUL)", k)
		}
		ck := http.CanonicalHeaderKey(k)
		if netguard.RefusedRequestHeader(ck) {
			return nil, errdefs.Errorf(errdefs.PolicyDenied, "http: the %s header cannot be set by a tool", ck)
		}
		h[ck] = []string{v}
	}
	if h.Get("User-Agent") == "" {
		h.Set("User-Agent", userAgent)
	}
	if len(body) > 0 && h.Get("Content-Type") == "" && jsonValid(body) {
		h.Set("Content-Type", "application/json")
	}
	return h, nil
}

// Interface guards.
var _ executors.Executor = (*Executor)(nil)
