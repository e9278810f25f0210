package template

// Templates: the one placeholder syntax shared by shell and HTTP tools, and
// the one renderer every context builds on.
//
// A template is literal text with placeholders:
//
//	{{.name}}  {{name}}  {{ .name }}   an argument (name ^[A-Za-z_][A-Za-z0-9_]*$)
//	{{secret.NAME}}                    a secret, looked up through a caller's func
//
// Anything else between "{{" and "}}", and a "{{" with no "}}", is a parse
// error naming its line and column. There is no escape for a literal "{{".
//
// Rendering is a single pass over the parsed template: a value is placed
// into the output and never looked at again, so a value that itself holds
// "{{.other}}" stays literal text. Every value goes through the escaper of
// the place it lands (shell word, URL path segment, query value, header,
// JSON), never the template's own text.
//
// Files: template.go (syntax, values, the renderer), shell*.go
// (shell commands), http.go (HTTP requests).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolcage/toolcage/policy/shellsyntax"
)

// Placeholder is one {{…}} in a template.
type Placeholder struct {
	// Name is the argument name, or the secret name for {{secret.NAME}}.
	Name string
	// Secret marks {{secret.NAME}}.
	Secret bool
	// Offset is the byte offset of "{{" in the template; End is the byte
	// offset just after "}}".
	Offset, End int
}

// part is a run of literal text (ph < 0) or one placeholder.
type part struct {
	lit string
	ph  int // index into Template.phs, or -1
}

// Template is a parsed template. It is immutable and safe for concurrent use.
type Template struct {
	src   string
	parts []part
	phs   []Placeholder
}

// Error is a template the parser, or a context's checks, refused.
type Error struct {
	// Offset is the byte offset of the problem in the template.
	Offset int
	// Line and Column are 1-based; Column counts characters, not bytes.
	Line, Column int
	Msg          string
}

func (e *Error) Error() string {
	return fmt.Sprintf("template error at line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// errorAt builds an Error for byte offset off of src.
func errorAt(src string, off int, format string, args ...any) *Error {
	if off < 0 {
		off = 0
	}
	if off > len(src) {
		off = len(src)
	}
	line, col := 1, 1
	for _, r := range src[:off] {
		if r == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return &Error{Offset: off, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// MissingArgumentError is a placeholder whose argument was not given (or was
// JSON null).
type MissingArgumentError struct {
	Name string
}

func (e *MissingArgumentError) Error() string { return fmt.Sprintf("missing argument %q", e.Name) }

// ErrSecretsUnavailable is returned when a template uses {{secret.NAME}} and
// the caller gave no secret lookup.
var ErrSecretsUnavailable = errors.New("secrets are not available")

// ArgumentError is an argument value refused by the place it lands (a header
// with a line break, a shell option where an operand belongs, ...).
type ArgumentError struct {
	// Name is the argument, or "secret.NAME".
	Name string
	Msg  string
}

func (e *ArgumentError) Error() string { return fmt.Sprintf("argument %q: %s", e.Name, e.Msg) }

// MaxBytes bounds a template.
const MaxBytes = 256 << 10

// Parse parses s. The result renders the same text for the same
// arguments, every time; parse it once and reuse it.
func Parse(s string) (*Template, error) {
	if len(s) > MaxBytes {
		return nil, errorAt(s, 0, "template is larger than %d bytes", MaxBytes)
	}
	t := &Template{src: s}
	i := 0
	for {
		j := strings.Index(s[i:], "{{")
		if j < 0 {
			t.addLit(s[i:])
			return t, nil
		}
		start := i + j
		t.addLit(s[i:start])
		k := strings.Index(s[start+2:], "}}")
		if k < 0 {
			return nil, errorAt(s, start, `"{{" is not closed by "}}"`)
		}
		end := start + 2 + k + 2
		p, ok := parsePlaceholder(s[start+2 : end-2])
		if !ok {
			return nil, errorAt(s, start, "bad placeholder %s: want {{.name}}, {{name}} or {{secret.NAME}}, name matching ^[A-Za-z_][A-Za-z0-9_]*$", show(s[start:end]))
		}
		p.Offset, p.End = start, end
		t.parts = append(t.parts, part{ph: len(t.phs)})
		t.phs = append(t.phs, p)
		i = end
	}
}

func (t *Template) addLit(s string) {
	if s != "" {
		t.parts = append(t.parts, part{lit: s, ph: -1})
	}
}

// parsePlaceholder parses what lies between "{{" and "}}".
func parsePlaceholder(inner string) (Placeholder, bool) {
	inner = strings.Trim(inner, " \t")
	switch {
	case strings.HasPrefix(inner, "."):
		inner = inner[1:]
	case strings.HasPrefix(inner, "secret."):
		name := inner[len("secret."):]
		return Placeholder{Name: name, Secret: true}, shellsyntax.IsName(name)
	}
	return Placeholder{Name: inner}, shellsyntax.IsName(inner)
}

// show quotes s for an error message, shortened.
func show(s string) string {
	const max = 60
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strconv.Quote(s)
}

// String returns the template source.
func (t *Template) String() string { return t.src }

// Placeholders returns every placeholder, in order, repeats included.
func (t *Template) Placeholders() []Placeholder {
	var out []Placeholder
	for _, part := range t.parts {
		if part.ph >= 0 {
			out = append(out, t.phs[part.ph])
		}
	}
	return out
}

// Vars returns the argument names used, each once, in order of first use.
// Secrets are not included.
func (t *Template) Vars() []string { return t.names(false) }

// Secrets returns the secret names used, each once, in order of first use.
func (t *Template) Secrets() []string { return t.names(true) }

func (t *Template) names(secret bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, part := range t.parts {
		if part.ph < 0 {
			continue
		}
		p := t.phs[part.ph]
		if p.Secret == secret && !seen[p.Name] {
			seen[p.Name] = true
			out = append(out, p.Name)
		}
	}
	return out
}

// HasArgs reports whether the template has an argument placeholder.
func (t *Template) HasArgs() bool { return len(t.Vars()) > 0 }

// isExactlyOne reports whether the template is a single placeholder and
// nothing else, returning its index.
func (t *Template) isExactlyOne() (int, bool) {
	if len(t.parts) == 1 && t.parts[0].ph >= 0 {
		return t.parts[0].ph, true
	}
	return -1, false
}

// RenderOptions controls (*Template).Render.
type RenderOptions struct {
	// AllowMissing renders a placeholder whose argument is absent or JSON
	// null as empty text instead of failing with a *MissingArgumentError.
	// It suits optional arguments; HTTP query parameters use their own rule
	// (a parameter with a missing argument is left out, see RenderHTTP).
	AllowMissing bool
	// Secrets looks up {{secret.NAME}}. Nil means secrets are not available:
	// rendering a secret placeholder then fails with ErrSecretsUnavailable.
	Secrets func(name string) (string, error)
	// Escape, if set, is applied to the text of every substituted value
	// (argument or secret), and never to the template's own text. Nil places
	// values verbatim.
	Escape func(value string) (string, error)
}

// Render renders the template in one pass: each placeholder is replaced by
// its value's text (see ValueText), passed through opts.Escape.
func (t *Template) Render(args map[string]any, opts RenderOptions) (string, error) {
	src := newTmplValues(args, opts.Secrets)
	return t.render(src, func(_ int, p Placeholder, v any, missing bool) (string, error) {
		if missing {
			if !opts.AllowMissing {
				return "", &MissingArgumentError{Name: p.Name}
			}
			return "", nil
		}
		s, err := ValueText(v)
		if err != nil {
			return "", &ArgumentError{Name: phName(p), Msg: err.Error()}
		}
		if opts.Escape == nil {
			return s, nil
		}
		return opts.Escape(s)
	})
}

// escaper turns placeholder i's value into output text. missing is set
// for an absent (or null) argument; v is then nil. Secrets arrive as strings.
type escaper func(i int, p Placeholder, v any, missing bool) (string, error)

// render is the one renderer: a single pass over the parts, literal text
// copied and each placeholder's value handed to esc. Nothing written is
// read again. With a nil src the escaper is handed no value: the caller has
// resolved values already and picks them by index.
func (t *Template) render(src *values, esc escaper) (string, error) {
	var b strings.Builder
	b.Grow(len(t.src) + 16*len(t.phs))
	for _, part := range t.parts {
		if part.ph < 0 {
			b.WriteString(part.lit)
			continue
		}
		p := t.phs[part.ph]
		var v any
		ok := true
		if src != nil {
			var err error
			if v, ok, err = src.lookup(p); err != nil {
				return "", err
			}
		}
		s, err := esc(part.ph, p, v, !ok)
		if err != nil {
			return "", err
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// phName names a placeholder in errors: "x" or "secret.X".
func phName(p Placeholder) string {
	if p.Secret {
		return "secret." + p.Name
	}
	return p.Name
}

// values resolves placeholders for one render: arguments from the map,
// secrets through the lookup func, each secret fetched at most once.
type values struct {
	args    map[string]any
	secrets func(string) (string, error)
	cache   map[string]string
}

func newTmplValues(args map[string]any, secrets func(string) (string, error)) *values {
	return &values{args: args, secrets: secrets}
}

// lookup returns the value for p; ok is false for an absent or null
// argument. A secret that cannot be looked up is an error, never "missing".
func (s *values) lookup(p Placeholder) (v any, ok bool, err error) {
	if !p.Secret {
		v, ok = s.args[p.Name]
		if v == nil {
			return nil, false, nil
		}
		return v, ok, nil
	}
	if sv, hit := s.cache[p.Name]; hit {
		return sv, true, nil
	}
	if s.secrets == nil {
		return nil, false, ErrSecretsUnavailable
	}
	sv, err := s.secrets(p.Name)
	if err != nil {
		return nil, false, fmt.Errorf("secret %q: %w", p.Name, err)
	}
	if s.cache == nil {
		s.cache = map[string]string{}
	}
	s.cache[p.Name] = sv
	return sv, true, nil
}

// ValueText is the text of an argument value as templates place it: strings
// as they are, numbers in plain decimal (no exponent: 1e21 renders as
// "1000000000000000000000"), booleans as true/false, json.Number as written,
// and arrays, objects and any other value as compact JSON. NaN and the
// infinities have no text and are refused.
func ValueText(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case json.Number:
		return x.String(), nil
	case float64:
		return formatFloat(x, 64)
	case float32:
		return formatFloat(float64(x), 32)
	case int:
		return strconv.Itoa(x), nil
	case int8, int16, int32, int64:
		return fmt.Sprint(x), nil
	case uint, uint8, uint16, uint32, uint64, uintptr:
		return fmt.Sprint(x), nil
	case nil:
		return "", nil
	}
	b, err := jsonText(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func formatFloat(f float64, bits int) (string, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", errors.New("number is not finite")
	}
	if f == 0 {
		return "0", nil // also for -0
	}
	return strconv.FormatFloat(f, 'f', -1, bits), nil
}

// jsonText encodes v as compact JSON without HTML escaping, so "<", ">" and
// "&" keep their own spelling.
func jsonText(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, errors.New("value cannot be encoded as JSON: " + strings.TrimPrefix(err.Error(), "json: "))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// ValueJSON is the JSON encoding of an argument value, compact, without HTML
// escaping; floats that are whole numbers below 1e21 keep plain decimal.
func ValueJSON(v any) ([]byte, error) {
	switch x := v.(type) {
	case float64:
		s, err := formatFloat(x, 64)
		return []byte(s), err
	case float32:
		s, err := formatFloat(float64(x), 32)
		return []byte(s), err
	}
	return jsonText(v)
}
