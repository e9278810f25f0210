package js

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dop251/goja"
	"golang.org/x/text/unicode/norm"
)

// utilsNames lists every utils helper, in the order Object.keys(utils)
// gives them. Helpers in goUtils are Go; the rest are in utils.js.
//
// Semantics worth knowing, beyond the names:
//   - hash(text, algorithm = "sha256"): hex digest of the UTF-8 bytes;
//     md5, sha1, sha256, sha384, sha512.
//   - generatePassword(length = 16): 4..4096 characters from letters,
//     digits and symbols, at least one of each class, crypto/rand.
//   - base64Decode accepts standard and URL alphabets, padded or not;
//     base64Decode and hexDecode give the bytes as UTF-8 text and throw
//     TypeError on malformed input.
//   - Dates are handled in UTC. dateDiff(a, b, unit = "days") is b − a in
//     whole units (truncated), units milliseconds..weeks; dateAdd(date,
//     amount, unit = "days") also takes months and years (clamping the
//     day to the month's end) and returns ISO 8601; "now" means now.
//     formatDate(date, locale = "en-US") gives "January 2, 2006" for en-US
//     and en, "2 January 2006" for other English locales and "2006-01-02"
//     for any other locale.
//   - slugify is lowercase ASCII letters and digits joined by "-", after
//     removing diacritics; camelCase, snakeCase and kebabCase split words at
//     anything not a letter or digit and at lower-to-upper case changes.
//   - truncate(text, maxLength = 100, suffix = "...") keeps the result
//     within maxLength, suffix included.
//   - isUrl wants an absolute URL with a scheme and a host.
//   - round(value, decimals = 0) rounds half away from zero on the decimal
//     value as written; randomInt(min = 0, max = 100) is inclusive; avg([])
//     is 0.
//   - toJson(data, indent = 2); parseCsv(csv, delimiter = ",") takes the
//     first row as the header, trims leading spaces, skips blank lines,
//     fills missing fields with "" and ignores extra ones.
//   - flatten(obj, prefix = "") joins nested plain-object keys with ".",
//     keeping arrays and empty objects as values; getPath(obj, "a.b[0]['c']")
//     follows own properties only and gives undefined when a step is missing.
//   - unique keeps the first of each value (SameValueZero); shuffle and
//     sample(arr, n = 1) return new arrays; groupBy(arr, key) takes a
//     property name or a function.
var utilsNames = newNameSet(
	"hash", "uuid", "generatePassword",
	"base64Encode", "base64Decode", "urlEncode", "urlDecode", "hexEncode", "hexDecode",
	"now", "timestamp", "dateDiff", "dateAdd", "formatDate",
	"slugify", "camelCase", "snakeCase", "kebabCase", "titleCase", "truncate", "countWords", "removeDiacritics",
	"isEmail", "isUrl", "isJson", "isUuid",
	"clamp", "round", "randomInt", "sum", "avg",
	"parseJson", "toJson", "parseCsv", "flatten", "getPath",
	"unique", "chunk", "shuffle", "sample", "groupBy",
	"getApiKey", "getSecret", "getServiceConfig", "getConfigEntry", "getConfigEntries", "getFieldValue",
	"callTool", "listTools",
	"getState", "setState", "deleteState", "listStateKeys",
)

// goUtils are the helpers written in Go.
var goUtils = map[string]func(*realm, goja.FunctionCall) goja.Value{
	"hash":             (*realm).utilHash,
	"uuid":             (*realm).utilUUID,
	"generatePassword": (*realm).utilGeneratePassword,
	"base64Encode":     (*realm).utilBase64Encode,
	"base64Decode":     (*realm).utilBase64Decode,
	"hexEncode":        (*realm).utilHexEncode,
	"hexDecode":        (*realm).utilHexDecode,
	"slugify":          (*realm).utilSlugify,
	"camelCase":        (*realm).utilCamelCase,
	"snakeCase":        (*realm).utilSnakeCase,
	"kebabCase":        (*realm).utilKebabCase,
	"removeDiacritics": (*realm).utilRemoveDiacritics,
	"isUrl":            (*realm).utilIsURL,
	"parseCsv":         (*realm).utilParseCSV,
	"getApiKey":        (*realm).utilGetAPIKey,
	"getSecret":        (*realm).utilGetAPIKey,
	"getServiceConfig": (*realm).utilGetServiceConfig,
	"getConfigEntry":   (*realm).utilGetConfigEntry,
	"getConfigEntries": (*realm).utilGetConfigEntries,
	"getFieldValue":    (*realm).utilGetFieldValue,
	"callTool":         (*realm).utilCallTool,
	"listTools":        (*realm).utilListTools,
	"getState":         (*realm).utilGetState,
	"setState":         (*realm).utilSetState,
	"deleteState":      (*realm).utilDeleteState,
	"listStateKeys":    (*realm).utilListStateKeys,
}

// utils builds the tool's utils object. Helpers are built on first use.
func (r *realm) utils() goja.Value {
	return r.rt.NewDynamicObject(&lazyObject{names: utilsNames, build: func(name string) goja.Value {
		if f, ok := goUtils[name]; ok {
			return r.rt.ToValue(func(fc goja.FunctionCall) goja.Value { return f(r, fc) })
		}
		v, err := r.make(goja.Undefined(), r.rt.ToValue(name))
		if err != nil {
			panic(err)
		}
		return v
	}})
}

// throw raises a JavaScript error of the named kind from a Go helper.
func (r *realm) throw(kind, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if kind != "TypeError" {
		if ctor, ok := r.rt.Get(kind).(*goja.Object); ok {
			if e, err := r.rt.New(ctor, r.rt.ToValue(msg)); err == nil {
				panic(e)
			}
		}
	}
	panic(r.rt.NewTypeError("%s", msg))
}

// text returns argument i as a string; fn names the helper for the error
// thrown when it is missing.
func (r *realm) text(fc goja.FunctionCall, i int, fn string) string {
	v := fc.Argument(i)
	if goja.IsUndefined(v) || goja.IsNull(v) {
		r.throw("TypeError", "utils.%s: expected a string, got %s", fn, v)
	}
	return v.String()
}

// optText returns argument i as a string, or def when it is undefined.
func optText(fc goja.FunctionCall, i int, def string) string {
	v := fc.Argument(i)
	if goja.IsUndefined(v) {
		return def
	}
	return v.String()
}

func (r *realm) utilHash(fc goja.FunctionCall) goja.Value {
	text := r.text(fc, 0, "hash")
	alg := strings.ToLower(strings.ReplaceAll(optText(fc, 1, "sha256"), "-", ""))
	var h hash.Hash
	switch alg {
	case "md5":
		h = md5.New()
	case "sha1":
		h = sha1.New()
	case "sha256":
		h = sha256.New()
	case "sha384":
		h = sha512.New384()
	case "sha512":
		h = sha512.New()
	default:
		r.throw("TypeError", "utils.hash: unsupported algorithm %q (use md5, sha1, sha256, sha384 or sha512)", optText(fc, 1, ""))
	}
	_, _ = io.WriteString(h, text)
	return r.rt.ToValue(hex.EncodeToString(h.Sum(nil)))
}

func (r *realm) utilUUID(goja.FunctionCall) goja.Value {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant
	h := hex.EncodeToString(b[:])
	return r.rt.ToValue(h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32])
}

// Password character classes.
var passwordClasses = []string{
	"abcdefghijklmnopqrstuvwxyz",
	"ABCDEFGHIJKLMNOPQRSTUVWXYZ",
	"0123456789",
	"!@#$%^&*()-_=+[]{}<>?",
}

func (r *realm) utilGeneratePassword(fc goja.FunctionCall) goja.Value {
	n := 16.0
	if v := fc.Argument(0); !goja.IsUndefined(v) {
		n = v.ToFloat()
	}
	if !(n >= 4 && n <= 4096) {
		r.throw("RangeError", "utils.generatePassword: length must be between 4 and 4096, got %v", fc.Argument(0))
	}
	length := int(n)
	all := strings.Join(passwordClasses, "")
	pw := make([]byte, length)
	for i := range pw {
		pw[i] = all[randIntN(len(all))]
	}
	// One of each class, at distinct random places.
	places := make([]int, length)
	for i := range places {
		places[i] = i
	}
	for i, class := range passwordClasses {
		j := i + randIntN(length-i)
		places[i], places[j] = places[j], places[i]
		pw[places[i]] = class[randIntN(len(class))]
	}
	return r.rt.ToValue(string(pw))
}

// randIntN returns a uniform integer in [0, n) from crypto/rand.
func randIntN(n int) int {
	limit := ^uint32(0) - ^uint32(0)%uint32(n)
	var b [4]byte
	for {
		_, _ = rand.Read(b[:])
		if v := binary.LittleEndian.Uint32(b[:]); v < limit {
			return int(v % uint32(n))
		}
	}
}

func (r *realm) utilBase64Encode(fc goja.FunctionCall) goja.Value {
	return r.rt.ToValue(base64.StdEncoding.EncodeToString([]byte(r.text(fc, 0, "base64Encode"))))
}

func (r *realm) utilBase64Decode(fc goja.FunctionCall) goja.Value {
	s := strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, r.text(fc, 0, "base64Decode"))
	enc := base64.StdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.URLEncoding
	}
	if !strings.HasSuffix(s, "=") {
		enc = enc.WithPadding(base64.NoPadding)
	}
	b, err := enc.DecodeString(s)
	if err != nil {
		r.throw("TypeError", "utils.base64Decode: invalid base64: %v", err)
	}
	return r.rt.ToValue(string(b))
}

func (r *realm) utilHexEncode(fc goja.FunctionCall) goja.Value {
	return r.rt.ToValue(hex.EncodeToString([]byte(r.text(fc, 0, "hexEncode"))))
}

func (r *realm) utilHexDecode(fc goja.FunctionCall) goja.Value {
	s := strings.TrimSpace(r.text(fc, 0, "hexDecode"))
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	b, err := hex.DecodeString(s)
	if err != nil {
		r.throw("TypeError", "utils.hexDecode: invalid hex: %v", err)
	}
	return r.rt.ToValue(string(b))
}

// removeDiacritics strips combining marks after canonical decomposition.
func removeDiacritics(s string) string {
	d := norm.NFD.String(s)
	d = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, d)
	return norm.NFC.String(d)
}

func (r *realm) utilRemoveDiacritics(fc goja.FunctionCall) goja.Value {
	return r.rt.ToValue(removeDiacritics(r.text(fc, 0, "removeDiacritics")))
}

func (r *realm) utilSlugify(fc goja.FunctionCall) goja.Value {
	s := strings.ToLower(removeDiacritics(r.text(fc, 0, "slugify")))
	var sb strings.Builder
	dash := false
	for _, c := range s {
		if 'a' <= c && c <= 'z' || '0' <= c && c <= '9' {
			if dash && sb.Len() > 0 {
				sb.WriteByte('-')
			}
			dash = false
			sb.WriteRune(c)
			continue
		}
		dash = true
	}
	return r.rt.ToValue(sb.String())
}

// words splits s into words at anything that is not a letter or digit, at
// lower-to-upper changes ("fooBar") and before the last capital of a run
// followed by a lowercase letter ("XMLHttp").
func words(s string) []string {
	var out []string
	rs := []rune(s)
	start := -1
	for i, c := range rs {
		if !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			if start >= 0 {
				out = append(out, string(rs[start:i]))
				start = -1
			}
			continue
		}
		if start >= 0 && unicode.IsUpper(c) {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || unicode.IsUpper(prev) && nextLower {
				out = append(out, string(rs[start:i]))
				start = i
			}
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, string(rs[start:]))
	}
	return out
}

func (r *realm) utilCamelCase(fc goja.FunctionCall) goja.Value {
	var sb strings.Builder
	for i, w := range words(r.text(fc, 0, "camelCase")) {
		w = strings.ToLower(w)
		if i > 0 {
			c, size := utf8.DecodeRuneInString(w)
			w = string(unicode.ToUpper(c)) + w[size:]
		}
		sb.WriteString(w)
	}
	return r.rt.ToValue(sb.String())
}

func (r *realm) utilSnakeCase(fc goja.FunctionCall) goja.Value {
	return r.rt.ToValue(strings.ToLower(strings.Join(words(r.text(fc, 0, "snakeCase")), "_")))
}

func (r *realm) utilKebabCase(fc goja.FunctionCall) goja.Value {
	return r.rt.ToValue(strings.ToLower(strings.Join(words(r.text(fc, 0, "kebabCase")), "-")))
}

func (r *realm) utilIsURL(fc goja.FunctionCall) goja.Value {
	s, ok := fc.Argument(0).Export().(string)
	if !ok || s == "" || strings.ContainsFunc(s, unicode.IsSpace) {
		return r.rt.ToValue(false)
	}
	u, err := url.Parse(s)
	return r.rt.ToValue(err == nil && u.Scheme != "" && u.Host != "")
}

// csvCheckEvery is how many CSV rows go by between checks for a stopped
// call, so that a huge input cannot outrun the limits inside one native
// call.
const csvCheckEvery = 256

func (r *realm) utilParseCSV(fc goja.FunctionCall) goja.Value {
	text := r.text(fc, 0, "parseCsv")
	delim := optText(fc, 1, ",")
	comma, size := utf8.DecodeRuneInString(delim)
	if size == 0 || size != len(delim) || comma == '"' || comma == '\r' || comma == '\n' || comma == utf8.RuneError {
		r.throw("TypeError", "utils.parseCsv: delimiter must be one character other than a quote or newline, got %q", delim)
	}
	cr := csv.NewReader(strings.NewReader(text))
	cr.Comma = comma
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.TrimLeadingSpace = comma != ' ' && comma != '\t'
	cr.ReuseRecord = true

	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return r.rt.NewArray()
	}
	if err != nil {
		r.throw("SyntaxError", "utils.parseCsv: %v", err)
	}
	header = append([]string(nil), header...)
	var rows []any
	for n := 1; ; n++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			r.throw("SyntaxError", "utils.parseCsv: %v", err)
		}
		if n%csvCheckEvery == 0 && r.c.stopped.Load() {
			return goja.Undefined()
		}
		o := r.rt.NewObject()
		for i, key := range header {
			v := ""
			if i < len(rec) {
				v = rec[i]
			}
			// Defined, not assigned: a "__proto__" column is a column.
			if err := o.DefineDataProperty(key, r.rt.ToValue(v), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
				panic(err)
			}
		}
		rows = append(rows, o)
	}
	return r.rt.NewArray(rows...)
}
