package catalog

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzParse checks the definition parser on arbitrary input: it never panics,
// and whatever it accepts is valid and survives a round trip through its
// JSON form (what the daemon stores and serves) unchanged.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		jsYAML, shellYAML, httpYAML, jsJSON, shellJSON, httpJSON,
		"---\n" + jsYAML + "...\n",
		jsYAML + "---\n" + shellYAML,
		"name: x\ndescription: y\nkind: js\njs: {code: '1'}\nlimits: {timeout: 1.5, memory: 1.5KiB, output: 0}\n",
		"name: x\ndescription: y\nkind: js\njs: {code: '1'}\nparameters: {type: object, $defs: {a: {type: string}}, properties: {p: {$ref: '#/$defs/a'}}}\n",
		"name: x\ndescription: y\nkind: js\njs: {code: '1'}\nparameters: {type: object, properties: {p: {$ref: 'file:///etc/passwd'}}}\n",
		"name: x\ndescription: y\nkind: shell\nshell: {command: 'echo {{.a}}', env: {}}\nparameters: {type: object, properties: {a: {type: string, pattern: '^[a-z]+$'}}}\n",
		"name: x\ndescription: y\nkind: http\nhttp: {method: post, url: 'https://e.com/{{p}}', allowed_domains: [e.com], body: '{\"a\": {{a}}}', max_response_bytes: 1MB}\n",
		`{"name":"x","description":"d","kind":"js","js":{"code":"1"},"limits":{"timeout":"24h","memory":"1GiB","requests":1}}`,
		`{"name":"x","description":"d","kind":"js","js":{"code":"1"},"parameters":null,"permissions":[],"secrets":["a_b"]}`,
		"name: &a x\ndescription: *a\nkind: js\njs: {code: *a}\n",
		"[1, 2]", "null", "", "{}", "name: x\nname: y\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Parse(data)
		if err != nil {
			if d != nil {
				t.Fatalf("Parse returned both a definition and %v", err)
			}
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("Parse accepted a definition Validate refuses: %v", err)
		}
		b1, err := json.Marshal(d)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		d2, err := ParseJSON(b1)
		if err != nil {
			t.Fatalf("ParseJSON refuses the marshalled definition %s: %v", b1, err)
		}
		b2, err := json.Marshal(d2)
		if err != nil {
			t.Fatalf("marshal again: %v", err)
		}
		if !bytes.Equal(b1, b2) {
			t.Fatalf("round trip changed the definition:\n%s\n%s", b1, b2)
		}
		if !sameParams(d.Parameters, d2.Parameters) {
			t.Fatalf("round trip changed the parameters: %s vs %s", d.Parameters, d2.Parameters)
		}
	})
}

// sameParams compares two schemas as JSON values.
func sameParams(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}
