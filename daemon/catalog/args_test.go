package catalog

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestParseArgPairs(t *testing.T) {
	types := map[string]string{
		"s": "string", "i": "integer", "n": "number", "b": "boolean",
		"o": "object", "a": "array", "z": "null", "weird": "strnig",
	}
	tests := []struct {
		name    string
		pairs   []string
		want    string
		wantErr string
	}{
		{name: "none", pairs: nil, want: `{}`},
		{name: "string", pairs: []string{"s=hello world"}, want: `{"s":"hello world"}`},
		{name: "string keeps later equals", pairs: []string{"s=a=b=c"}, want: `{"s":"a=b=c"}`},
		{name: "string empty", pairs: []string{"s="}, want: `{"s":""}`},
		{name: "string looks like a number", pairs: []string{"s=42"}, want: `{"s":"42"}`},
		{name: "string no html escaping", pairs: []string{"s=<a&b>"}, want: `{"s":"<a&b>"}`},
		{name: "string quotes and newline", pairs: []string{"s=say \"hi\"\n"}, want: `{"s":"say \"hi\"\n"}`},
		{name: "unknown key is a string", pairs: []string{"x=true"}, want: `{"x":"true"}`},
		{name: "unknown type is a string", pairs: []string{"weird=[1]"}, want: `{"weird":"[1]"}`},
		{name: "integer", pairs: []string{"i=42"}, want: `{"i":42}`},
		{name: "integer negative", pairs: []string{"i=-7"}, want: `{"i":-7}`},
		{name: "integer plus and leading zeros", pairs: []string{"i=+007"}, want: `{"i":7}`},
		{name: "integer zero", pairs: []string{"i=000"}, want: `{"i":0}`},
		{name: "integer big stays exact", pairs: []string{"i=123456789012345678901234567890"}, want: `{"i":123456789012345678901234567890}`},
		{name: "integer 2^53+1 exact", pairs: []string{"i=9007199254740993"}, want: `{"i":9007199254740993}`},
		{name: "integer with exponent", pairs: []string{"i=1e3"}, want: `{"i":1e3}`},
		{name: "integer as 2.0", pairs: []string{"i=2.0"}, want: `{"i":2.0}`},
		{name: "integer 1.5e1", pairs: []string{"i=1.5e1"}, want: `{"i":1.5e1}`},
		{name: "integer 1200e-2", pairs: []string{"i=1200e-2"}, want: `{"i":1200e-2}`},
		{name: "integer fraction refused", pairs: []string{"i=1.5"}, wantErr: `"1.5" is not an integer`},
		{name: "integer 1e-1 refused", pairs: []string{"i=1e-1"}, wantErr: "not an integer"},
		{name: "integer text refused", pairs: []string{"i=ten"}, wantErr: `"ten" is not a number`},
		{name: "integer empty refused", pairs: []string{"i="}, wantErr: "is not a number"},
		{name: "integer hex refused", pairs: []string{"i=0x10"}, wantErr: "is not a number"},
		{name: "integer spaces refused", pairs: []string{"i= 1"}, wantErr: "is not a number"},
		{name: "number", pairs: []string{"n=3.25"}, want: `{"n":3.25}`},
		{name: "number leading dot", pairs: []string{"n=.5"}, want: `{"n":0.5}`},
		{name: "number trailing dot", pairs: []string{"n=-5."}, want: `{"n":-5}`},
		{name: "number exponent", pairs: []string{"n=6.02E+23"}, want: `{"n":6.02e23}`},
		{name: "number keeps digits", pairs: []string{"n=0.1000000000000000055511151231257827"}, want: `{"n":0.1000000000000000055511151231257827}`},
		{name: "number overflow refused", pairs: []string{"n=1e400"}, wantErr: "out of range"},
		{name: "number NaN refused", pairs: []string{"n=NaN"}, wantErr: "not a number"},
		{name: "number Inf refused", pairs: []string{"n=Inf"}, wantErr: "not a number"},
		{name: "number lone sign refused", pairs: []string{"n=-"}, wantErr: "not a number"},
		{name: "number lone dot refused", pairs: []string{"n=."}, wantErr: "not a number"},
		{name: "number bad exponent refused", pairs: []string{"n=1e"}, wantErr: "not a number"},
		{name: "boolean true", pairs: []string{"b=true"}, want: `{"b":true}`},
		{name: "boolean YES", pairs: []string{"b=YES"}, want: `{"b":true}`},
		{name: "boolean 1", pairs: []string{"b=1"}, want: `{"b":true}`},
		{name: "boolean False", pairs: []string{"b=False"}, want: `{"b":false}`},
		{name: "boolean no", pairs: []string{"b=no"}, want: `{"b":false}`},
		{name: "boolean 0", pairs: []string{"b=0"}, want: `{"b":false}`},
		{name: "boolean refused", pairs: []string{"b=maybe"}, wantErr: `"maybe" is not a boolean`},
		{name: "boolean empty refused", pairs: []string{"b="}, wantErr: "is not a boolean"},
		{name: "object", pairs: []string{`o= { "k" : [1, 2] } `}, want: `{"o":{"k":[1,2]}}`},
		{name: "object refused for array", pairs: []string{"o=[1]"}, wantErr: "is not a JSON object"},
		{name: "object refused for text", pairs: []string{"o=k=v"}, wantErr: "is not a JSON object"},
		{name: "object refused when empty", pairs: []string{"o="}, wantErr: "is not a JSON object"},
		{name: "object refused with trailing data", pairs: []string{"o={} {}"}, wantErr: "is not a JSON object"},
		{name: "array", pairs: []string{`a=["x", 2, true]`}, want: `{"a":["x",2,true]}`},
		{name: "array refused for csv", pairs: []string{"a=x,y"}, wantErr: "is not a JSON array"},
		{name: "null", pairs: []string{"z=null"}, want: `{"z":null}`},
		{name: "null refused", pairs: []string{"z=nil"}, wantErr: `"nil" is not null`},
		{name: "sorted keys", pairs: []string{"s=x", "b=yes", "i=1"}, want: `{"b":true,"i":1,"s":"x"}`},
		{name: "missing equals", pairs: []string{"s"}, wantErr: `argument "s": want key=value`},
		{name: "empty key", pairs: []string{"=v"}, wantErr: "key before \"=\" is empty"},
		{name: "duplicate key", pairs: []string{"s=a", "s=b"}, wantErr: `argument "s" given more than once`},
		{name: "invalid utf-8", pairs: []string{"s=\xff"}, wantErr: "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseArgPairs(tt.pairs, types)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q (got %s)", err, tt.wantErr, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if string(got) != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
			if !json.Valid(got) {
				t.Fatalf("output is not valid JSON: %s", got)
			}
		})
	}
}

// TestParseArgPairsValidates checks that the coerced arguments satisfy the
// schema they were coerced for, end to end with CompileSchema.
func TestParseArgPairsValidates(t *testing.T) {
	s, err := CompileSchema(json.RawMessage(`{
		"type": "object",
		"properties": {
			"domain": {"type": "string"},
			"count": {"type": "integer", "minimum": 1},
			"ratio": {"type": "number"},
			"verbose": {"type": "boolean"},
			"tags": {"type": "array", "items": {"type": "string"}},
			"opts": {"type": "object"}
		},
		"required": ["domain"],
		"additionalProperties": false
	}`))
	if err != nil {
		t.Fatal(err)
	}
	args, err := ParseArgPairs([]string{"domain=example.com", "count=3", "ratio=0.5", "verbose=yes", `tags=["a","b"]`, `opts={"x":1}`}, s.Types)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(args); err != nil {
		t.Fatalf("Validate(%s) = %v", args, err)
	}
	args, err = ParseArgPairs([]string{"domain=example.com", "count=0"}, s.Types)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(args); err == nil {
		t.Fatalf("Validate(%s) = nil, want minimum error", args)
	}
}

func FuzzParseArgPairs(f *testing.F) {
	// pairs are newline-separated; types are newline-separated key=type.
	f.Add("s=hello\ni=42", "s=string\ni=integer")
	f.Add("n=1e3\nb=yes", "n=number\nb=boolean")
	f.Add(`o={"a":[1,2]}`+"\na=[]", "o=object\na=array")
	f.Add("z=null\nx=plain", "z=null")
	f.Add("i=123456789012345678901234567890", "i=integer")
	f.Add("i=1e-99999999999999999999", "i=integer")
	f.Add("n=-0.0e-0", "n=number")
	f.Add("=\n=x\nk", "")
	f.Add("k=\xff\xfe", "k=string")
	f.Fuzz(func(t *testing.T, pairsText, typesText string) {
		pairs := strings.Split(pairsText, "\n")
		types := map[string]string{}
		for _, l := range strings.Split(typesText, "\n") {
			if k, v, ok := strings.Cut(l, "="); ok {
				types[k] = v
			}
		}
		out, err := ParseArgPairs(pairs, types)
		if err != nil {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.UseNumber()
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			t.Fatalf("output %q is not a JSON object: %v", out, err)
		}
		if dec.More() || !json.Valid(out) {
			t.Fatalf("output %q is not exactly one JSON value", out)
		}
		if len(obj) != len(pairs) {
			t.Fatalf("output %s has %d keys for %d pairs", out, len(obj), len(pairs))
		}
		for _, p := range pairs {
			k, v, _ := strings.Cut(p, "=")
			got, ok := obj[k]
			if !ok {
				t.Fatalf("key %q missing from %s", k, out)
			}
			switch types[k] {
			case "integer", "number", "boolean", "object", "array", "null":
			default:
				if got != v {
					t.Fatalf("string %q came back as %v", v, got)
				}
			}
		}
		// Same input, same bytes.
		again, err := ParseArgPairs(pairs, types)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not deterministic: %s vs %s (%v)", out, again, err)
		}
	})
}
