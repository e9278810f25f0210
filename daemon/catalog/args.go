package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ParseArgPairs turns command-line arguments written as key=value into a JSON
// object. Each value is read according to the JSON type the tool's schema
// declares for its key (types is Schema.Types):
//
//	string                as is
//	integer, number       a number, written out exactly as given (no float rounding)
//	boolean               true/false, 1/0, yes/no (any case)
//	object, array, null   JSON of that type
//	anything else         as a string, so a value never changes meaning by its look
//
// Each pair is split at its first "=", so values may contain "=". The result
// lists keys in sorted order, so the same pairs always give the same bytes.
func ParseArgPairs(pairs []string, types map[string]string) (json.RawMessage, error) {
	vals := make(map[string]json.RawMessage, len(pairs))
	for _, p := range pairs {
		key, value, ok := strings.Cut(p, "=")
		switch {
		case !ok:
			return nil, fmt.Errorf("argument %q: want key=value", p)
		case key == "":
			return nil, fmt.Errorf("argument %q: the key before \"=\" is empty", p)
		case !utf8.ValidString(p):
			return nil, fmt.Errorf("argument %q is not valid UTF-8", p)
		}
		if _, dup := vals[key]; dup {
			return nil, fmt.Errorf("argument %q given more than once", key)
		}
		v, err := coerceArg(value, types[key])
		if err != nil {
			return nil, fmt.Errorf("argument %q: %w", key, err)
		}
		vals[key] = v
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(jsonString(k))
		buf.WriteByte(':')
		buf.Write(vals[k])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// coerceArg reads one value as the JSON type typ.
func coerceArg(value, typ string) (json.RawMessage, error) {
	switch typ {
	case "integer", "number":
		n, integral, err := normalizeNumber(value)
		if err != nil {
			return nil, err
		}
		if typ == "integer" && !integral {
			return nil, fmt.Errorf("%q is not an integer", value)
		}
		return json.RawMessage(n), nil
	case "boolean":
		switch strings.ToLower(value) {
		case "true", "1", "yes":
			return json.RawMessage("true"), nil
		case "false", "0", "no":
			return json.RawMessage("false"), nil
		}
		return nil, fmt.Errorf("%q is not a boolean (want true/false, 1/0 or yes/no)", value)
	case "object", "array", "null":
		return jsonOfType(value, typ)
	}
	return jsonString(value), nil
}

// jsonOfType checks that value is one JSON value of type typ and returns it
// compacted.
func jsonOfType(value, typ string) (json.RawMessage, error) {
	start := map[string]byte{"object": '{', "array": '[', "null": 'n'}[typ]
	t := bytes.TrimSpace([]byte(value))
	if !json.Valid(t) || t[0] != start {
		switch typ {
		case "object":
			return nil, fmt.Errorf(`%q is not a JSON object (e.g. {"k":1})`, value)
		case "array":
			return nil, fmt.Errorf("%q is not a JSON array (e.g. [1,2])", value)
		}
		return nil, fmt.Errorf("%q is not null", value)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, t); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// normalizeNumber checks that s is a decimal number (an optional sign, digits
// with an optional fraction, an optional exponent) and returns it as a JSON
// number literal, keeping every digit: "+007" → "7", ".5" → "0.5", "5." → "5".
// integral reports whether the value is a whole number (1e3 and 2.0 are).
func normalizeNumber(s string) (n string, integral bool, err error) {
	bad := func() (string, bool, error) {
		return "", false, fmt.Errorf("%q is not a number", s)
	}
	i := 0
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	digits := func() string {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return s[j:i]
	}
	intPart := digits()
	frac := ""
	if i < len(s) && s[i] == '.' {
		i++
		frac = digits()
	}
	if intPart == "" && frac == "" {
		return bad()
	}
	expSign, exp := "", ""
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			if s[i] == '-' {
				expSign = "-"
			}
			i++
		}
		if exp = digits(); exp == "" {
			return bad()
		}
	}
	if i != len(s) {
		return bad()
	}

	intPart = strings.TrimLeft(intPart, "0")
	if intPart == "" {
		intPart = "0"
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	b.WriteString(intPart)
	if frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	if exp != "" {
		b.WriteByte('e')
		b.WriteString(expSign)
		b.WriteString(exp)
	}
	n = b.String()
	if _, err := strconv.ParseFloat(n, 64); err != nil {
		// Only ErrRange is possible here: the syntax is already checked.
		return "", false, fmt.Errorf("%q is out of range", s)
	}
	return n, isIntegral(intPart, frac, expSign, exp), nil
}

// isIntegral reports whether intPart.frac × 10^(expSign exp) is whole.
func isIntegral(intPart, frac, expSign, exp string) bool {
	mant := strings.TrimRight(intPart+frac, "0")
	if strings.Trim(mant, "0") == "" {
		return true // zero
	}
	// value = digits × 10^(e − len(frac)); whole when the trailing zeros of
	// the digits make up for the negative power.
	zeros := len(intPart+frac) - len(mant)
	e := int64(0)
	if exp != "" {
		v, err := strconv.ParseInt(exp, 10, 32)
		if err != nil {
			// An exponent beyond 32 bits with a finite non-zero float value
			// can only be hugely negative: far from whole.
			return expSign == ""
		}
		e = v
		if expSign == "-" {
			e = -e
		}
	}
	return e-int64(len(frac))+int64(zeros) >= 0
}

// jsonString encodes s as a JSON string without HTML escaping.
func jsonString(s string) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimRight(buf.Bytes(), "\n")
}
