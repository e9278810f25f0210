package template

// HTTP tool rendering: a URL template, query or body parameters, headers and
// an optional JSON body template, each value escaped for where it lands.
//
//   - URL: the scheme, user info, host and port are the author's literal
//     text; a placeholder there is refused, so no argument can move the
//     call to another host. Placeholders in the path are path-escaped (a
//     value cannot add a "/"), and a segment that renders as "", "." or
//     ".." is refused; in the query they are query-escaped (a value cannot
//     add "&", "=" or "#"); in the fragment they are refused.
//   - Params: for GET, HEAD and DELETE, and whenever a Body template is
//     given, they are appended to the URL's query in name order; for POST,
//     PUT and PATCH without a Body they form a JSON object, in which a
//     parameter that is exactly one placeholder keeps its argument's JSON
//     type. A parameter whose placeholder has no argument is left out: the
//     arguments of params and of the URL's query are optional.
//   - Headers: names are fixed by the author; rendered values may not hold
//     CR, LF, NUL or other control characters. The arguments of headers and
//     of the URL's path are required.
//   - Body: a JSON template. A placeholder outside a JSON string becomes its
//     value's JSON encoding (null when the argument is missing); inside a
//     string it becomes the value's text, escaped as string content. The
//     template must be valid JSON with every placeholder standing for a
//     value, which is checked when it is compiled.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"
)

// HTTPSpec is the request part of an http tool's definition.
type HTTPSpec struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Params  map[string]string `json:"params,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
}

// HTTPRendering is a rendered request.
type HTTPRendering struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    []byte            `json:"body,omitempty"`
}

// HTTPError is an HTTP template refused at compile time; Field
// names the part ("url", "params.q", "headers.Authorization", "body").
type HTTPError struct {
	Field string
	Err   error
}

func (e *HTTPError) Error() string { return e.Field + ": " + e.Err.Error() }

func (e *HTTPError) Unwrap() error { return e.Err }

// CompiledHTTP is a checked HTTP template, ready to render many times. It
// is immutable and safe for concurrent use.
type CompiledHTTP struct {
	method      string
	url         *urlTemplate
	params      []param
	paramsQuery bool // params go to the query; otherwise to a JSON body
	headers     []header
	body        *bodyTemplate
	hasCT       bool // the headers set Content-Type
}

type param struct {
	name  string
	value *Template
}

type header struct {
	name  string
	value *Template
}

// urlTemplate is a URL template cut at its fixed authority.
type urlTemplate struct {
	t        *Template
	prefix   string // scheme://authority, literal
	base     *url.URL
	path     *Template
	query    []*Template // the &-separated pairs of the query
	fragment string      // literal, with its "#"
}

// bodyTemplate is a JSON body template; inString[i] tells whether placeholder i
// sits inside a JSON string literal.
type bodyTemplate struct {
	t        *Template
	inString []bool
}

// methods lists the methods and where their params go.
var methods = map[string]bool{ // true: params in the query
	"GET": true, "HEAD": true, "DELETE": true,
	"POST": false, "PUT": false, "PATCH": false,
}

// framingHeaders are headers the HTTP client owns: setting them could
// split or smuggle the request or change where it is routed.
var framingHeaders = map[string]bool{
	"host": true, "content-length": true, "transfer-encoding": true, "connection": true,
	"keep-alive": true, "proxy-connection": true, "te": true, "trailer": true, "upgrade": true,
}

// ValidateHTTP checks an http tool's request template at creation.
// The error is an *HTTPError.
func ValidateHTTP(spec HTTPSpec) error {
	_, err := CompileHTTP(spec)
	return err
}

// CompileHTTP parses and checks an HTTP template once.
func CompileHTTP(spec HTTPSpec) (*CompiledHTTP, error) {
	c := &CompiledHTTP{method: strings.ToUpper(strings.TrimSpace(spec.Method))}
	inQuery, ok := methods[c.method]
	if !ok {
		return nil, &HTTPError{Field: "method", Err: fmt.Errorf("unknown method %q (want GET, HEAD, POST, PUT, PATCH or DELETE)", spec.Method)}
	}
	u, err := parseURL(spec.URL)
	if err != nil {
		return nil, &HTTPError{Field: "url", Err: err}
	}
	c.url = u

	for _, name := range sortedKeys(spec.Params) {
		field := "params." + name
		if name == "" {
			return nil, &HTTPError{Field: "params", Err: errors.New("a parameter name is empty")}
		}
		if err := fixedText(name); err != nil {
			return nil, &HTTPError{Field: field, Err: err}
		}
		t, err := Parse(spec.Params[name])
		if err != nil {
			return nil, &HTTPError{Field: field, Err: err}
		}
		c.params = append(c.params, param{name: name, value: t})
	}

	seen := map[string]string{}
	for _, name := range sortedKeys(spec.Headers) {
		field := "headers." + name
		if !isToken(name) {
			return nil, &HTTPError{Field: field, Err: fmt.Errorf("%q is not a valid header name", name)}
		}
		lower := strings.ToLower(name)
		if framingHeaders[lower] {
			return nil, &HTTPError{Field: field, Err: fmt.Errorf("the %s header is set by the HTTP client and may not be templated", name)}
		}
		if other, dup := seen[lower]; dup {
			return nil, &HTTPError{Field: field, Err: fmt.Errorf("header given twice (%q and %q)", other, name)}
		}
		seen[lower] = name
		t, err := Parse(spec.Headers[name])
		if err != nil {
			return nil, &HTTPError{Field: field, Err: err}
		}
		for _, p := range t.parts {
			if p.ph < 0 {
				if err := headerText(p.lit); err != nil {
					return nil, &HTTPError{Field: field, Err: err}
				}
			}
		}
		if lower == "content-type" {
			c.hasCT = true
		}
		c.headers = append(c.headers, header{name: name, value: t})
	}

	if spec.Body != "" {
		if c.method == "GET" || c.method == "HEAD" {
			return nil, &HTTPError{Field: "body", Err: fmt.Errorf("a %s request has no body", c.method)}
		}
		b, err := parseBody(spec.Body)
		if err != nil {
			return nil, &HTTPError{Field: "body", Err: err}
		}
		c.body = b
		inQuery = true
	}
	c.paramsQuery = inQuery

	// Render once with stand-in values: the literal text must make a URL.
	if _, err := c.url.render(standIn{}, nil); err != nil {
		return nil, &HTTPError{Field: "url", Err: err}
	}
	return c, nil
}

// standIn is the argument map used to test-render a template.
type standIn struct{}

// sortedKeys returns m's keys in order.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// fixedText refuses placeholders in text the author must fix, such as
// parameter names.
func fixedText(s string) error {
	if strings.Contains(s, "{{") {
		return errors.New("a name may not hold a placeholder")
	}
	return nil
}

// isToken reports whether s is an HTTP token (RFC 9110 tchar+).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// headerText refuses text that could end a header line or confuse a
// server: CR, LF, NUL and other C0 and C1 controls (tab is allowed), DEL,
// the Unicode line and paragraph separators, and invalid UTF-8.
func headerText(s string) error {
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			return errors.New("header value is not valid UTF-8")
		case r == '\r' || r == '\n':
			return errors.New("header value contains a line break")
		case r == 0:
			return errors.New("header value contains a NUL byte")
		case r == '\t':
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == '\u2028' || r == '\u2029':
			return fmt.Errorf("header value contains the control character %q", r)
		}
	}
	return nil
}

// parseURL cuts a URL template at its authority and checks that the
// scheme and authority are literal.
func parseURL(s string) (*urlTemplate, error) {
	t, err := Parse(s)
	if err != nil {
		return nil, err
	}
	u := &urlTemplate{t: t}
	off := 0
	for _, p := range t.parts {
		if p.ph >= 0 {
			off = t.phs[p.ph].End
			continue
		}
		if i := strings.IndexFunc(p.lit, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '\\' }); i >= 0 {
			return nil, errorAt(s, off+i, "the URL contains white space, a control character or a backslash; escape it")
		}
		off += len(p.lit)
	}
	if len(t.parts) == 0 || t.parts[0].ph >= 0 {
		return nil, errorAt(s, 0, "the URL must start with a literal http:// or https://")
	}
	lit0 := t.parts[0].lit
	sep := strings.Index(lit0, "://")
	if sep < 0 {
		return nil, errorAt(s, 0, "the URL must start with a literal http:// or https://")
	}
	end := strings.IndexAny(lit0[sep+3:], "/?#")
	if end < 0 {
		if len(t.parts) > 1 {
			return nil, errorAt(s, t.phs[t.parts[1].ph].Offset, "placeholder in the scheme, user info, host or port of the URL; these must be fixed text so that no argument can change where the call goes")
		}
		end = len(lit0)
	} else {
		end += sep + 3
	}
	u.prefix = lit0[:end]
	base, err := url.Parse(u.prefix)
	if err != nil {
		return nil, errorAt(s, 0, "bad URL: %v", strings.TrimPrefix(err.Error(), "parse "))
	}
	scheme := strings.ToLower(base.Scheme)
	if scheme != "http" && scheme != "https" || base.Opaque != "" || base.Host == "" || base.Path != "" || base.RawQuery != "" {
		return nil, errorAt(s, 0, "the URL must start with http:// or https:// and a host")
	}
	u.base = base

	// The rest: path, then query pairs, then the fragment.
	const (
		inPath = iota
		inQuery
		inFragment
	)
	state := inPath
	var path, pair []part
	var frag strings.Builder
	flushPair := func() {
		u.query = append(u.query, &Template{src: s, parts: pair, phs: t.phs})
		pair = nil
	}
	rest := append([]part{{lit: lit0[end:], ph: -1}}, t.parts[1:]...)
	for _, p := range rest {
		if p.ph >= 0 {
			ph := t.phs[p.ph]
			var prev string
			switch state {
			case inPath:
				prev = lastLit(path)
				path = append(path, p)
			case inQuery:
				prev = lastLit(pair)
				pair = append(pair, p)
			default:
				return nil, errorAt(s, ph.Offset, "placeholder in the URL fragment")
			}
			if i := strings.LastIndexByte(prev, '%'); i >= 0 && len(prev)-i <= 2 {
				return nil, errorAt(s, ph.Offset, "placeholder inside a %%-escape")
			}
			continue
		}
		lit := p.lit
		for lit != "" {
			switch state {
			case inPath:
				i := strings.IndexAny(lit, "?#")
				if i < 0 {
					path = appendLit(path, lit)
					lit = ""
					continue
				}
				path = appendLit(path, lit[:i])
				if lit[i] == '?' {
					state = inQuery
				} else {
					state = inFragment
					frag.WriteByte('#')
				}
				lit = lit[i+1:]
			case inQuery:
				i := strings.IndexAny(lit, "&#")
				if i < 0 {
					pair = appendLit(pair, lit)
					lit = ""
					continue
				}
				pair = appendLit(pair, lit[:i])
				flushPair()
				if lit[i] == '#' {
					state = inFragment
					frag.WriteByte('#')
				}
				lit = lit[i+1:]
			default:
				frag.WriteString(lit)
				lit = ""
			}
		}
	}
	if state == inQuery {
		flushPair()
	}
	u.path = &Template{src: s, parts: path, phs: t.phs}
	u.fragment = frag.String()
	return u, nil
}

func appendLit(ps []part, s string) []part {
	if s == "" {
		return ps
	}
	return append(ps, part{lit: s, ph: -1})
}

func lastLit(ps []part) string {
	if len(ps) == 0 || ps[len(ps)-1].ph >= 0 {
		return ""
	}
	return ps[len(ps)-1].lit
}

// argSource is where a render takes its values from: a real render's
// values, or stand-ins when compiling.
type argSource interface {
	lookup(p Placeholder) (any, bool, error)
}

func (standIn) lookup(Placeholder) (any, bool, error) { return "x", true, nil }

// render renders the URL; extra is appended to the query (already
// escaped "k=v" pairs).
func (u *urlTemplate) render(src argSource, extra []string) (string, error) {
	var b strings.Builder
	b.WriteString(u.prefix)

	// Path: each value path-escaped; spans remember where values went.
	pathStart := b.Len()
	type span struct {
		start, end int
		name       string
	}
	var spans []span
	for _, part := range u.path.parts {
		if part.ph < 0 {
			b.WriteString(part.lit)
			continue
		}
		p := u.path.phs[part.ph]
		v, ok, err := src.lookup(p)
		if err != nil {
			return "", err
		}
		if !ok {
			return "", &MissingArgumentError{Name: p.Name}
		}
		text, err := ValueText(v)
		if err != nil {
			return "", &ArgumentError{Name: phName(p), Msg: err.Error()}
		}
		if strings.ContainsAny(text, `/\`) {
			for _, seg := range strings.FieldsFunc(text, func(r rune) bool { return r == '/' || r == '\\' }) {
				if seg == "." || seg == ".." {
					return "", &ArgumentError{Name: phName(p), Msg: "a URL path value may not hold a \".\" or \"..\" segment"}
				}
			}
		}
		start := b.Len()
		b.WriteString(url.PathEscape(text))
		spans = append(spans, span{start, b.Len(), phName(p)})
	}
	full := b.String()
	segStart := pathStart
	for i := pathStart; i <= len(full); i++ {
		if i < len(full) && full[i] != '/' {
			continue
		}
		seg := full[segStart:i]
		for _, sp := range spans {
			if sp.start >= segStart && sp.end <= i {
				dec, err := url.PathUnescape(seg)
				if err != nil {
					dec = seg
				}
				if seg == "" || dec == "." || dec == ".." {
					return "", &ArgumentError{Name: sp.name, Msg: fmt.Sprintf("makes the URL path segment %q, which is empty, \".\" or \"..\"", seg)}
				}
				break
			}
		}
		segStart = i + 1
	}

	// Query: the template's pairs, then extra; a pair with a missing
	// argument is left out.
	var pairs []string
	for _, pt := range u.query {
		text, missing, err := renderEscaped(pt, src, url.QueryEscape)
		if err != nil {
			return "", err
		}
		if !missing {
			pairs = append(pairs, text)
		}
	}
	pairs = append(pairs, extra...)
	if len(pairs) > 0 {
		b.WriteByte('?')
		b.WriteString(strings.Join(pairs, "&"))
	}
	b.WriteString(u.fragment)
	out := b.String()

	// The authority was literal; check that it is still what parses.
	got, err := url.Parse(out)
	if err != nil {
		// The error would quote the URL, secrets and all; say only why.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", fmt.Errorf("rendered URL does not parse: %v", err)
	}
	if got.Scheme != u.base.Scheme || got.Host != u.base.Host || got.User.String() != u.base.User.String() {
		return "", fmt.Errorf("rendered URL changed host: %q is not %q", got.Host, u.base.Host)
	}
	return out, nil
}

// renderEscaped renders t with every value escaped by esc, reporting
// (instead of failing on) a missing argument.
func renderEscaped(t *Template, src argSource, esc func(string) string) (text string, missing bool, err error) {
	var b strings.Builder
	for _, part := range t.parts {
		if part.ph < 0 {
			b.WriteString(part.lit)
			continue
		}
		p := t.phs[part.ph]
		v, ok, err := src.lookup(p)
		if err != nil {
			return "", false, err
		}
		if !ok {
			return "", true, nil
		}
		s, err := ValueText(v)
		if err != nil {
			return "", false, &ArgumentError{Name: phName(p), Msg: err.Error()}
		}
		b.WriteString(esc(s))
	}
	return b.String(), false, nil
}

// parseBody parses a JSON body template and finds which placeholders
// sit inside JSON strings. It refuses a placeholder right after a
// backslash in a string (the value would finish the escape) and a body
// that is not JSON once each placeholder stands for a value.
func parseBody(s string) (*bodyTemplate, error) {
	t, err := Parse(s)
	if err != nil {
		return nil, err
	}
	b := &bodyTemplate{t: t, inString: make([]bool, len(t.phs))}
	inStr, esc := false, false
	for _, part := range t.parts {
		if part.ph >= 0 {
			if esc {
				return nil, errorAt(s, t.phs[part.ph].Offset, "placeholder right after a backslash in a JSON string")
			}
			b.inString[part.ph] = inStr
			continue
		}
		for i := 0; i < len(part.lit); i++ {
			c := part.lit[i]
			switch {
			case esc:
				esc = false
			case inStr && c == '\\':
				esc = true
			case c == '"':
				inStr = !inStr
			}
		}
	}
	standIn, err := t.render(nil, func(i int, _ Placeholder, _ any, _ bool) (string, error) {
		if b.inString[i] {
			return "x", nil
		}
		return "null", nil
	})
	if err != nil {
		return nil, err
	}
	if !json.Valid([]byte(standIn)) {
		return nil, errorAt(s, 0, "the body is not valid JSON with each placeholder standing for a JSON value (write \"{{x}}\" inside quotes for text, {{x}} bare for a value)")
	}
	return b, nil
}

// render renders the body: JSON values outside strings, escaped text inside.
func (b *bodyTemplate) render(src *values) ([]byte, error) {
	out, err := b.t.render(src, func(i int, p Placeholder, v any, missing bool) (string, error) {
		if !b.inString[i] {
			if missing {
				return "null", nil
			}
			j, err := ValueJSON(v)
			if err != nil {
				return "", &ArgumentError{Name: phName(p), Msg: err.Error()}
			}
			return string(j), nil
		}
		if missing {
			return "", nil
		}
		text, err := ValueText(v)
		if err != nil {
			return "", &ArgumentError{Name: phName(p), Msg: err.Error()}
		}
		j, err := jsonText(text)
		if err != nil {
			return "", &ArgumentError{Name: phName(p), Msg: err.Error()}
		}
		return string(j[1 : len(j)-1]), nil
	})
	if err != nil {
		return nil, err
	}
	if !json.Valid([]byte(out)) {
		return nil, errors.New("rendered body is not valid JSON")
	}
	return []byte(out), nil
}

// RenderHTTP compiles and renders an HTTP template in one go; a caller that
// renders the same template often can CompileHTTP it once instead.
func RenderHTTP(spec HTTPSpec, args map[string]any, secrets func(string) (string, error)) (*HTTPRendering, error) {
	c, err := CompileHTTP(spec)
	if err != nil {
		return nil, err
	}
	return c.Render(args, secrets)
}

// Render renders the request for one call. secrets looks up
// {{secret.NAME}}; nil means secrets are not available.
func (c *CompiledHTTP) Render(args map[string]any, secrets func(string) (string, error)) (*HTTPRendering, error) {
	src := newTmplValues(args, secrets)
	r := &HTTPRendering{Method: c.method}

	var extra []string
	var bodyObj map[string]any
	if len(c.params) > 0 && !c.paramsQuery {
		bodyObj = map[string]any{}
	}
	for _, p := range c.params {
		if bodyObj != nil {
			if i, one := p.value.isExactlyOne(); one {
				v, ok, err := src.lookup(p.value.phs[i])
				if err != nil {
					return nil, err
				}
				if ok {
					j, err := ValueJSON(v)
					if err != nil {
						return nil, &ArgumentError{Name: phName(p.value.phs[i]), Msg: err.Error()}
					}
					bodyObj[p.name] = json.RawMessage(j)
				}
				continue
			}
		}
		text, missing, err := renderEscaped(p.value, src, func(s string) string { return s })
		if err != nil {
			return nil, err
		}
		if missing {
			continue
		}
		if bodyObj != nil {
			bodyObj[p.name] = text
		} else {
			extra = append(extra, url.QueryEscape(p.name)+"="+url.QueryEscape(text))
		}
	}

	u, err := c.url.render(src, extra)
	if err != nil {
		return nil, err
	}
	r.URL = u

	if len(c.headers) > 0 {
		r.Headers = make(map[string]string, len(c.headers)+1)
	}
	for _, h := range c.headers {
		v, err := h.value.render(src, func(_ int, p Placeholder, v any, missing bool) (string, error) {
			if missing {
				return "", &MissingArgumentError{Name: p.Name}
			}
			s, err := ValueText(v)
			if err != nil {
				return "", &ArgumentError{Name: phName(p), Msg: err.Error()}
			}
			if err := headerText(s); err != nil {
				return "", &ArgumentError{Name: phName(p), Msg: "in header " + h.name + ": " + err.Error()}
			}
			return s, nil
		})
		if err != nil {
			return nil, err
		}
		r.Headers[h.name] = v
	}

	switch {
	case c.body != nil:
		body, err := c.body.render(src)
		if err != nil {
			return nil, err
		}
		r.Body = body
	case bodyObj != nil:
		body, err := jsonText(bodyObj)
		if err != nil {
			return nil, err
		}
		r.Body = body
	}
	if r.Body != nil && !c.hasCT {
		if r.Headers == nil {
			r.Headers = map[string]string{}
		}
		r.Headers["Content-Type"] = "application/json"
	}
	return r, nil
}

// Vars returns every argument the template uses, each once: the URL's,
// then the params', headers' and body's, in that order.
func (c *CompiledHTTP) Vars() []string { return uniqueNames(c.all(), (*Template).Vars) }

// Required returns the arguments a call must give: those of the URL's path
// and of the headers, each once, in that order.
func (c *CompiledHTTP) Required() []string {
	ts := []*Template{c.url.path}
	for _, h := range c.headers {
		ts = append(ts, h.value)
	}
	return uniqueNames(ts, (*Template).Vars)
}

// Secrets returns every secret the template uses, each once.
func (c *CompiledHTTP) Secrets() []string { return uniqueNames(c.all(), (*Template).Secrets) }

// all lists the request's templates: URL, params, headers, body.
func (c *CompiledHTTP) all() []*Template {
	ts := []*Template{c.url.t}
	for _, p := range c.params {
		ts = append(ts, p.value)
	}
	for _, h := range c.headers {
		ts = append(ts, h.value)
	}
	if c.body != nil {
		ts = append(ts, c.body.t)
	}
	return ts
}

// uniqueNames joins the names of each template, each once, in order.
func uniqueNames(ts []*Template, names func(*Template) []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range ts {
		for _, v := range names(t) {
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	return out
}

// GenerateParameters builds the JSON Schema of an HTTP tool's arguments
// from its template: every argument is a string property, and those in the
// URL path and the headers are required (the others are left out of the
// request when missing, see RenderHTTP).
func GenerateParameters(spec HTTPSpec) (json.RawMessage, error) {
	c, err := CompileHTTP(spec)
	if err != nil {
		return nil, err
	}
	type prop struct {
		Type string `json:"type"`
	}
	schema := struct {
		Type       string          `json:"type"`
		Properties map[string]prop `json:"properties"`
		Required   []string        `json:"required,omitempty"`
	}{Type: "object", Properties: map[string]prop{}, Required: c.Required()}
	for _, v := range c.Vars() {
		schema.Properties[v] = prop{Type: "string"}
	}
	return jsonText(schema)
}

// Interface guards.
var (
	_ argSource = (*values)(nil)
	_ argSource = standIn{}
)
