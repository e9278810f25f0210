package config

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
)

// configError says what is wrong in a configuration in the words of its
// file: each problem names its dotted key (`unknown key "log.bogus"`,
// `api.max_connections: want a whole number, got "abc"`), where mapstructure
// names the root key as two single quotes ("has invalid keys: bogus"). where
// is "config FILE" or "config".
func configError(where string, err error) error {
	var probs []string
	for _, e := range leaves(err) {
		probs = append(probs, describe(e)...)
	}
	if len(probs) == 0 {
		return fmt.Errorf("%s: %w", where, err)
	}
	return fmt.Errorf("%s: %s", where, strings.Join(probs, "; "))
}

// leaves flattens the joined errors under mapstructure's "decoding failed"
// wrapper down to the per-key *DecodeErrors (or whatever else is there).
func leaves(err error) []error {
	switch u := err.(type) {
	case *mapstructure.DecodeError:
		return []error{err}
	case interface{ Unwrap() []error }:
		var out []error
		for _, e := range u.Unwrap() {
			out = append(out, leaves(e)...)
		}
		return out
	case interface{ Unwrap() error }:
		if inner := u.Unwrap(); inner != nil {
			return leaves(inner)
		}
	}
	return []error{err}
}

// describe turns one decoding error into one line per problem.
func describe(err error) []string {
	var de *mapstructure.DecodeError
	if !errors.As(err, &de) {
		return []string{err.Error()}
	}
	key := de.Name()
	inner := de.Unwrap()
	msg := inner.Error()
	if list, ok := strings.CutPrefix(msg, "has invalid keys: "); ok {
		var out []string
		for _, k := range strings.Split(list, ", ") {
			out = append(out, fmt.Sprintf("unknown key %q", joinKey(key, k)))
		}
		return out
	}
	var pe *mapstructure.ParseError
	var ue *mapstructure.UnconvertibleTypeError
	switch {
	case errors.As(inner, &pe):
		return []string{fmt.Sprintf("%s: want %s, got %s", key, typeName(pe.Expected.Type()), valueText(pe.Value))}
	case errors.As(inner, &ue):
		return []string{fmt.Sprintf("%s: want %s, got %s", key, typeName(ue.Expected.Type()), valueText(ue.Value))}
	case strings.Contains(msg, "time: "):
		return []string{fmt.Sprintf("%s: want a duration like \"30s\" or \"5m\" (%s)", key, msg)}
	}
	return []string{key + ": " + msg}
}

func joinKey(parent, k string) string {
	if parent == "" {
		return k
	}
	return parent + "." + k
}

// typeName says a Go type the way a config file author reads it.
func typeName(t reflect.Type) string {
	if t == reflect.TypeFor[time.Duration]() {
		return `a duration like "30s"`
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	}
	return t.String()
}

// valueText shows the offending value: scalars quoted, others by shape.
func valueText(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case []any:
		return "a list"
	case map[string]any, map[any]any:
		return "a mapping"
	}
	return fmt.Sprintf("%q", fmt.Sprint(v))
}

// trimViper drops viper's "While parsing config: " between the file name and
// the YAML parser's own message.
func trimViper(err error) error {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "While parsing config: "); ok {
		return errors.New(rest)
	}
	return err
}
