package js

// fetch: the WHATWG-shaped fetch a tool gets when it holds the network
// permission. Without it the realm has no fetch at all (typeof fetch is
// "undefined").
//
//	const res = await fetch(url, { method, headers, body })
//
// Request:
//   - url is converted with String(); init is optional. method is one of
//     GET, POST, PUT, PATCH, DELETE, HEAD (any case, default GET); any
//     other method rejects.
//   - headers is a plain object, an array of [name, value] pairs, or a
//     Response's headers. Names and values are checked as HTTP requires;
//     Host, Content-Length and hop-by-hop headers (Connection, Upgrade,
//     Transfer-Encoding and the like) cannot be set, as in the HTTP
//     executor. User-Agent defaults to "toolcage-fetch/1", Accept to "*/*".
//   - body is a string (Content-Type text/plain;charset=UTF-8 unless one is
//     given), an ArrayBuffer or Uint8Array (sent as is), a number or
//     boolean (sent as its string), or any other object, which is sent as
//     JSON with Content-Type application/json unless one is given. GET and
//     HEAD cannot have a body. Other init members (signal, redirect, mode,
//     credentials, cache...) are ignored: redirects are always followed,
//     up to netguard.MaxRedirects, each one checked by the guard.
//
// Response: ok, status, statusText (the server's reason phrase), url (the
// final URL, after redirects), redirected, type ("basic"), headers, and
// bodyUsed, text() and json() on its prototype. headers has get(name)
// (case-insensitive; repeated headers joined with ", "; null when absent),
// has(name), forEach(fn(value, name, headers)), and entries(), keys() and
// values() iterators; it is itself iterable as entries, names lowercased
// and sorted. text() and json() return promises; the body can be read
// once, by either (a second read rejects with TypeError; bodyUsed tells),
// and json() rejects with the realm's SyntaxError on malformed JSON.
//
// The body is read whole before fetch's promise resolves (not streamed),
// so a failure while reading it rejects fetch itself. A UTF-8 BOM is
// dropped and invalid UTF-8 becomes U+FFFD, as WHATWG text() does.
//
// Failures:
//   - fetch never throws: a bad argument, a method or header that is not
//     allowed, a URL the network guard refuses (allowlist, private
//     addresses, scheme, userinfo...), a redirect it refuses, a refused
//     address after DNS, or a network error rejects the promise with a
//     TypeError "fetch: ...". The message names the guard's reason and
//     shows URLs only through netguard.RedactURL (no userinfo, no query).
//     The tool can catch it; the call goes on.
//   - Requests: a tool call may invoke fetch at most Limits.Requests
//     times (DefaultRequests when zero), whatever each fetch's outcome
//     (refused ones count). The fetch that goes past it ends the tool
//     call at once with limit_exceeded
//     (limit "requests"): the cap is on the call, not something a tool
//     can catch and retry around. A redirect is not a new request.
//   - Response size: a body larger than the call's output limit
//     (Limits.OutputBytes, else Config.OutputBytes, 1 MiB by default) ends
//     the call with limit_exceeded (limit "output"). The body is never read
//     past the limit: nothing when Content-Length already says too much,
//     otherwise at most limit+1 bytes, and the connection is dropped.
//     Each body is held to the limit on its own; the result is held to it
//     again when the call ends.
//   - The call's time limit covers fetches in flight: when the call is
//     stopped (time, memory, ctx) every request in flight is cancelled,
//     and so is any fetch still in flight when the tool's promise settles.
//
// Every request goes through a netguard.Guard built from the call's
// JS.AllowedDomains and JS.AllowPrivateHosts (see policy/netguard.go): the
// URL is checked before anything is sent, every redirect is checked again,
// and the dialer checks the address it connects to after DNS. Environment
// proxies are ignored. Guards and their connection pools are kept per
// allowlist across calls, as the HTTP executor does.
//
// How it runs: goja is single-threaded, so each request runs on its own
// goroutine and hands a completion back over a channel; the VM goroutine
// runs completions (resolving or rejecting the promise, which runs the
// microtasks that follow) in awaitFetches, for as long as the tool's
// promise is pending and a fetch is in flight. The requests' context is
// cancelled by the supervisor right after it stops the call, so a fetch is
// never failed by the stop itself before the stop is recorded.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/dop251/goja"
	"golang.org/x/net/http/httpguts"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/policy/netguard"
)

const (
	// DefaultRequests is how many times a call may call fetch when
	// Limits.Requests is zero.
	DefaultRequests = 10
	// networkPermission is the permission that gives a tool fetch.
	networkPermission = "network"
	// fetchUserAgent is sent when the tool sets no User-Agent.
	fetchUserAgent = "toolcage-fetch/1"
	// fetchGuardCacheSize is how many allowlists keep a guard and pool.
	fetchGuardCacheSize = 32
)

// fetchMethods are the methods fetch sends.
var fetchMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodHead}

// fetcher is a realm's fetch: its state lives on the VM goroutine, except
// ctx, done and c, which the request goroutines use.
type fetcher struct {
	r   *realm
	ctx context.Context
	// done carries completions from request goroutines to the VM
	// goroutine, which runs them.
	done chan func() error

	max      int   // requests allowed in the call
	maxBody  int64 // bytes allowed in one response body
	count    int   // fetch calls so far
	inflight int   // requests whose completion has not been run

	// Objects handed to the tool, and what fetch keeps for them.
	responses map[*goja.Object]*fetchBody
	headers   map[*goja.Object]*fetchHeaders
	// Prototypes, built with the first response.
	responseProto, headersProto *goja.Object
	// arrayValues is the realm's Array.prototype.values, taken before the
	// tool's code ran.
	arrayValues goja.Callable
}

// fetchBody is a response's body until it is used.
type fetchBody struct {
	text string
	used bool
}

// fetchHeaders are a response's headers: lowercased names, sorted, and
// repeated headers joined with ", ".
type fetchHeaders struct {
	names  []string
	values map[string]string
}

// fetchResult is what a request goroutine brings back.
type fetchResult struct {
	status     int
	statusText string
	url        string
	redirected bool
	header     fetchHeaders
	body       string
	// failure is the message of the TypeError fetch rejects with.
	failure string
}

// installFetch gives the realm a global fetch when the call holds the
// network permission; ctx bounds its requests.
func (r *realm) installFetch(ctx context.Context) error {
	if !slices.Contains(r.c.req.Permissions, networkPermission) {
		return nil
	}
	rt := r.rt
	values, ok := goja.AssertFunction(rt.Get("Array").ToObject(rt).Get("prototype").ToObject(rt).Get("values"))
	if !ok {
		return errors.New("the realm's Array.prototype.values is not a function")
	}
	f := &fetcher{
		r:           r,
		ctx:         ctx,
		done:        make(chan func() error),
		max:         r.c.lim.Requests,
		maxBody:     r.c.lim.OutputBytes,
		responses:   make(map[*goja.Object]*fetchBody),
		headers:     make(map[*goja.Object]*fetchHeaders),
		arrayValues: values,
	}
	if f.max <= 0 {
		f.max = DefaultRequests
	}
	if f.maxBody <= 0 {
		f.maxBody = DefaultOutputBytes
	}
	r.fetch = f
	return rt.GlobalObject().DefineDataProperty("fetch", rt.ToValue(f.fetch), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// awaitFetches is the realm's event loop: while the tool's promise p is
// pending and fetches are in flight, it waits for their completions and
// runs them on this (the VM) goroutine. It returns ended when the call
// ended while it waited (stopped, or an uncatchable error); otherwise p is
// settled, or nothing in flight can settle it any more.
func (r *realm) awaitFetches(p *goja.Promise) (outcome, bool) {
	f := r.fetch
	if f == nil {
		return outcome{}, false
	}
	for p.State() == goja.PromiseStatePending && f.inflight > 0 {
		select {
		case complete := <-f.done:
			f.inflight--
			if r.c.stopped.Load() {
				return outcome{err: f.stopped()}, true
			}
			if err := complete(); err != nil {
				return r.c.vmError(r, err, nil), true
			}
		case <-f.ctx.Done():
			return outcome{err: f.stopped()}, true
		}
	}
	return outcome{}, false
}

// stopped is the error of a call stopped while fetches were in flight.
func (f *fetcher) stopped() error {
	if err := f.r.c.stopReason(); err != nil {
		return err
	}
	// ctx ends only after the stop is recorded, or once Execute has
	// returned and nobody reads this.
	return errdefs.Errorf(errdefs.Unavailable, "js: call stopped")
}

// fetch is the global fetch. It never throws: every failure rejects the
// promise it returns, except going past the request limit, which stops
// the call.
func (f *fetcher) fetch(fc goja.FunctionCall) goja.Value {
	rt := f.r.rt
	p, resolve, reject := rt.NewPromise()
	f.count++
	if f.count > f.max {
		f.r.c.stop(errdefs.LimitError(errdefs.LimitRequests, "js: fetch called more than %d times, the call's request limit", f.max))
		return rt.ToValue(p) // the call is stopped at the next instruction
	}
	var req *http.Request
	var client *http.Client
	if ex := rt.Try(func() { req, client = f.newRequest(fc) }); ex != nil {
		must(reject(ex.Value()))
		return rt.ToValue(p)
	}
	f.inflight++
	go func() {
		res := f.roundTrip(client, req)
		complete := func() error {
			if res.failure != "" {
				return reject(rt.NewTypeError("%s", res.failure))
			}
			return resolve(f.newResponse(res))
		}
		select {
		case f.done <- complete:
		case <-f.ctx.Done():
		}
	}()
	return rt.ToValue(p)
}

// must propagates an uncatchable error (an interrupt) from a promise's
// resolving function; exceptions never come back from them.
func must(err error) {
	if err != nil {
		panic(err)
	}
}

// fetchThrow throws a TypeError "fetch: ..." inside the realm. (goja's
// NewTypeError takes a format: messages always go through "%s".)
func (f *fetcher) fetchThrow(format string, args ...any) {
	panic(f.r.rt.NewTypeError("%s", "fetch: "+fmt.Sprintf(format, args...)))
}

// newRequest builds the request for fetch(url, init), throwing TypeError
// for anything the guard or the checks refuse. It runs on the VM
// goroutine.
func (f *fetcher) newRequest(fc goja.FunctionCall) (*http.Request, *http.Client) {
	js := f.r.c.req.JS
	entry, err := f.r.c.guards.Get(js.AllowedDomains, js.AllowPrivateHosts)
	if err != nil {
		f.fetchThrow("%v", err)
	}
	rawURL := fc.Argument(0).String()
	u, err := entry.Guard.CheckURL(rawURL)
	if err != nil {
		f.fetchThrow("%v", err)
	}

	method := http.MethodGet
	header := make(http.Header)
	var body []byte
	var hasBody bool
	var contentType string
	if init := fc.Argument(1); !goja.IsUndefined(init) && !goja.IsNull(init) {
		o, ok := init.(*goja.Object)
		if !ok {
			f.fetchThrow("init must be an object")
		}
		if m := o.Get("method"); m != nil && !goja.IsUndefined(m) {
			method = strings.ToUpper(m.String())
			if !slices.Contains(fetchMethods, method) {
				f.fetchThrow("method %s is not allowed (GET, POST, PUT, PATCH, DELETE or HEAD)", strconv.QuoteToASCII(m.String()))
			}
		}
		if h := o.Get("headers"); h != nil && !goja.IsUndefined(h) && !goja.IsNull(h) {
			f.readHeaders(h, header)
		}
		if b := o.Get("body"); b != nil && !goja.IsUndefined(b) && !goja.IsNull(b) {
			body, contentType = f.readBody(b)
			hasBody = true
		}
	}
	if hasBody && (method == http.MethodGet || method == http.MethodHead) {
		f.fetchThrow("a %s request cannot have a body", method)
	}
	if contentType != "" && header.Get("Content-Type") == "" {
		header.Set("Content-Type", contentType)
	}
	if header.Get("User-Agent") == "" {
		header.Set("User-Agent", fetchUserAgent)
	}
	if header.Get("Accept") == "" {
		header.Set("Accept", "*/*")
	}

	var rd io.Reader
	if hasBody {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(f.ctx, method, u.String(), rd)
	if err != nil { // not expected: method and URL were checked
		f.fetchThrow("%s %s: the request cannot be built", method, netguard.RedactURL(rawURL))
	}
	req.URL = u // the URL the guard checked, parsed the same way
	req.Header = header
	return req, entry.Client
}

// readHeaders adds init.headers to h: a Response's headers, an array of
// [name, value] pairs, or an object's own enumerable properties.
func (f *fetcher) readHeaders(v goja.Value, h http.Header) {
	o, ok := v.(*goja.Object)
	if !ok {
		f.fetchThrow("headers must be an object or an array of [name, value] pairs")
	}
	if hs, ok := f.headers[o]; ok {
		for _, n := range hs.names {
			f.addHeader(h, n, hs.values[n])
		}
		return
	}
	if o.ClassName() == "Array" {
		for i := 0; float64(i) < f.r.lengthOf(o); i++ {
			pair, ok := o.Get(strconv.Itoa(i)).(*goja.Object)
			if !ok || f.r.lengthOf(pair) != 2 {
				f.fetchThrow("headers[%d] must be a [name, value] pair", i)
			}
			f.addHeader(h, pair.Get("0").String(), pair.Get("1").String())
		}
		return
	}
	for _, k := range o.Keys() {
		f.addHeader(h, k, o.Get(k).String())
	}
}

// addHeader checks and adds one request header.
func (f *fetcher) addHeader(h http.Header, name, value string) {
	if !httpguts.ValidHeaderFieldName(name) {
		f.fetchThrow("header name %s is not valid", strconv.QuoteToASCII(name))
	}
	value = strings.Trim(value, " \t\r\n")
	if !httpguts.ValidHeaderFieldValue(value) {
		f.fetchThrow("header %s has a value with control characters (CR, LF or NUL)", name)
	}
	ck := http.CanonicalHeaderKey(name)
	if netguard.RefusedRequestHeader(ck) {
		f.fetchThrow("the %s header cannot be set by a tool", ck)
	}
	h.Add(ck, value)
}

// Export types of the binary bodies fetch sends as they are.
var (
	arrayBufferType = reflect.TypeFor[goja.ArrayBuffer]()
	bytesType       = reflect.TypeFor[[]byte]()
)

// readBody converts init.body to bytes and the Content-Type it implies.
func (f *fetcher) readBody(v goja.Value) ([]byte, string) {
	o, ok := v.(*goja.Object)
	if !ok {
		// Strings, and the other primitives as their strings.
		return []byte(v.String()), "text/plain;charset=UTF-8"
	}
	switch o.ExportType() {
	case arrayBufferType:
		return bytes.Clone(o.Export().(goja.ArrayBuffer).Bytes()), ""
	case bytesType: // Uint8Array, Uint8ClampedArray
		return bytes.Clone(o.Export().([]byte)), ""
	}
	if _, ok := goja.AssertFunction(o); ok {
		f.fetchThrow("body cannot be a function")
	}
	return []byte(f.r.encodeJSON(o)), "application/json"
}

// roundTrip sends req and reads the response. It runs on its own
// goroutine and touches nothing of the realm; a body over the limit stops
// the call from here.
func (f *fetcher) roundTrip(client *http.Client, req *http.Request) *fetchResult {
	resp, err := client.Do(req)
	if err != nil {
		return &fetchResult{failure: fetchFailure(req, err)}
	}
	defer resp.Body.Close()
	body, err := readFetchBody(resp, req.Method, f.maxBody)
	if err != nil {
		var xe *errdefs.Error
		if errors.As(err, &xe) {
			f.r.c.stop(xe)
		}
		return &fetchResult{failure: fetchFailure(req, err)}
	}
	res := &fetchResult{
		status:     resp.StatusCode,
		statusText: strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode)+" "),
		url:        resp.Request.URL.String(),
		redirected: resp.Request.Response != nil, // set on a request a redirect made
		body:       strings.TrimPrefix(body, "\ufeff"),
	}
	if res.statusText == resp.Status { // no reason phrase
		res.statusText = ""
	}
	res.header.values = make(map[string]string, len(resp.Header))
	for k, vs := range resp.Header {
		n := strings.ToLower(k)
		res.header.names = append(res.header.names, n)
		res.header.values[n] = strings.Join(vs, ", ")
	}
	sort.Strings(res.header.names)
	return res
}

// readFetchBody reads at most maxBody+1 bytes of the body and refuses a
// body larger than maxBody without reading the rest: the caller's Close
// then drops the connection instead of draining it. The body is kept once,
// as the string the realm will see.
func readFetchBody(resp *http.Response, method string, maxBody int64) (string, error) {
	if method == http.MethodHead {
		return "", nil
	}
	if resp.ContentLength > maxBody {
		return "", errdefs.LimitError(errdefs.LimitOutput,
			"js: fetch response body is %d bytes (Content-Length), over the %d-byte output limit", resp.ContentLength, maxBody)
	}
	var sb strings.Builder
	if resp.ContentLength > 0 {
		sb.Grow(int(resp.ContentLength))
	}
	n, err := io.Copy(&sb, io.LimitReader(resp.Body, maxBody+1))
	if n > maxBody {
		return "", errdefs.LimitError(errdefs.LimitOutput, "js: fetch response body is over the %d-byte output limit", maxBody)
	}
	if err != nil {
		return "", fmt.Errorf("reading the body: %w", err)
	}
	return sb.String(), nil
}

// fetchFailure is the TypeError message for a request that failed: the
// guard's refusal as it words it, or the method, the redacted URL and the
// cause.
func fetchFailure(req *http.Request, err error) string {
	var nd *netguard.DeniedError
	if errors.As(err, &nd) {
		return "fetch: " + nd.Error()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Sprintf("fetch: %s %s: %v", req.Method, netguard.RedactURL(req.URL.String()), err)
}

// newResponse builds the Response object for res.
func (f *fetcher) newResponse(res *fetchResult) *goja.Object {
	rt := f.r.rt
	f.buildPrototypes()
	h := rt.CreateObject(f.headersProto)
	f.headers[h] = &res.header
	o := rt.CreateObject(f.responseProto)
	for _, p := range []struct {
		name  string
		value any
	}{
		{"ok", res.status >= 200 && res.status <= 299},
		{"status", res.status},
		{"statusText", res.statusText},
		{"url", res.url},
		{"redirected", res.redirected},
		{"type", "basic"},
		{"headers", h},
	} {
		must(o.DefineDataProperty(p.name, rt.ToValue(p.value), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_TRUE))
	}
	f.responses[o] = &fetchBody{text: res.body}
	return o
}

// buildPrototypes makes the Response and Headers prototypes once per
// realm. Their methods work only on objects fetch made.
func (f *fetcher) buildPrototypes() {
	if f.responseProto != nil {
		return
	}
	rt := f.r.rt
	method := func(o *goja.Object, name string, fn func(goja.FunctionCall) goja.Value) {
		must(o.DefineDataProperty(name, rt.ToValue(fn), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE))
	}
	tag := func(o *goja.Object, name string) {
		must(o.DefineDataPropertySymbol(goja.SymToStringTag, rt.ToValue(name), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE))
	}

	res := rt.NewObject()
	method(res, "text", func(fc goja.FunctionCall) goja.Value {
		return f.readBodyOnce(fc, "text", func(s string) (goja.Value, error) { return rt.ToValue(s), nil })
	})
	method(res, "json", func(fc goja.FunctionCall) goja.Value {
		return f.readBodyOnce(fc, "json", func(s string) (goja.Value, error) {
			return f.r.jsonParse(goja.Undefined(), rt.ToValue(s))
		})
	})
	must(res.DefineAccessorProperty("bodyUsed", rt.ToValue(func(fc goja.FunctionCall) goja.Value {
		return rt.ToValue(f.body(fc.This, "bodyUsed").used)
	}), nil, goja.FLAG_TRUE, goja.FLAG_FALSE))
	tag(res, "Response")

	hp := rt.NewObject()
	method(hp, "get", func(fc goja.FunctionCall) goja.Value {
		v, ok := f.headerSet(fc.This, "get").values[strings.ToLower(fc.Argument(0).String())]
		if !ok {
			return goja.Null()
		}
		return rt.ToValue(v)
	})
	method(hp, "has", func(fc goja.FunctionCall) goja.Value {
		_, ok := f.headerSet(fc.This, "has").values[strings.ToLower(fc.Argument(0).String())]
		return rt.ToValue(ok)
	})
	method(hp, "forEach", func(fc goja.FunctionCall) goja.Value {
		hs := f.headerSet(fc.This, "forEach")
		cb, ok := goja.AssertFunction(fc.Argument(0))
		if !ok {
			f.fetchThrow("headers.forEach: callback is not a function")
		}
		for _, n := range hs.names {
			if _, err := cb(fc.Argument(1), rt.ToValue(hs.values[n]), rt.ToValue(n), fc.This); err != nil {
				panic(err)
			}
		}
		return goja.Undefined()
	})
	iter := func(name string, item func(hs *fetchHeaders, n string) goja.Value) func(goja.FunctionCall) goja.Value {
		return func(fc goja.FunctionCall) goja.Value {
			hs := f.headerSet(fc.This, name)
			items := make([]any, len(hs.names))
			for i, n := range hs.names {
				items[i] = item(hs, n)
			}
			it, err := f.arrayValues(rt.NewArray(items...))
			if err != nil {
				panic(err)
			}
			return it
		}
	}
	entries := iter("entries", func(hs *fetchHeaders, n string) goja.Value {
		return rt.NewArray(n, hs.values[n])
	})
	method(hp, "entries", entries)
	method(hp, "keys", iter("keys", func(_ *fetchHeaders, n string) goja.Value { return rt.ToValue(n) }))
	method(hp, "values", iter("values", func(hs *fetchHeaders, n string) goja.Value { return rt.ToValue(hs.values[n]) }))
	must(hp.DefineDataPropertySymbol(goja.SymIterator, rt.ToValue(entries), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE))
	tag(hp, "Headers")

	f.responseProto, f.headersProto = res, hp
}

// body returns the body of a Response fetch made, or throws TypeError.
func (f *fetcher) body(this goja.Value, what string) *fetchBody {
	if o, ok := this.(*goja.Object); ok {
		if b, ok := f.responses[o]; ok {
			return b
		}
	}
	f.fetchThrow("Response.%s called on an object that is not a Response", what)
	return nil
}

// headerSet returns the headers behind a Headers object fetch made, or
// throws TypeError.
func (f *fetcher) headerSet(this goja.Value, what string) *fetchHeaders {
	if o, ok := this.(*goja.Object); ok {
		if hs, ok := f.headers[o]; ok {
			return hs
		}
	}
	f.fetchThrow("Headers.%s called on an object that is not a Headers", what)
	return nil
}

// readBodyOnce implements text() and json(): a promise of convert(body),
// rejected when the body was used already or convert throws. The body
// string is dropped once used, so the realm holds the only copy.
func (f *fetcher) readBodyOnce(fc goja.FunctionCall, what string, convert func(string) (goja.Value, error)) goja.Value {
	rt := f.r.rt
	b := f.body(fc.This, what)
	p, resolve, reject := rt.NewPromise()
	if b.used {
		must(reject(rt.NewTypeError("fetch: Response.%s: body has already been used", what)))
		return rt.ToValue(p)
	}
	text := b.text
	b.text, b.used = "", true
	v, err := convert(text)
	if err != nil {
		var ex *goja.Exception
		if !errors.As(err, &ex) {
			panic(err) // uncatchable: an interrupt
		}
		must(reject(ex.Value()))
		return rt.ToValue(p)
	}
	must(resolve(v))
	return rt.ToValue(p)
}
