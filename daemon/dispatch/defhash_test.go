package dispatch

import (
	"testing"

	"github.com/toolcage/toolcage/daemon/catalog"
)

// TestDefinitionHash: a definition's hash names what runs: the same for
// the same definition however it is spelled, another for any change a
// call depends on (code, parameters, permissions), as a tool file edited
// in place at version 1 is.
func TestDefinitionHash(t *testing.T) {
	hash := func(src string) string {
		t.Helper()
		def, err := catalog.Parse([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		h, err := definitionHash(def)
		if err != nil || len(h) != 64 {
			t.Fatalf("hash %q %v", h, err)
		}
		return h
	}
	base := hash("name: deploy\ndescription: d\nkind: js\napproval: ask\njs: {code: 'return 1'}\n")
	if same := hash(`{"kind":"js","js":{"code":"return 1"},"approval":"ask","description":"d","name":"deploy"}`); same != base {
		t.Errorf("the same definition in JSON hashes otherwise")
	}
	for _, other := range []string{
		"name: deploy\ndescription: d\nkind: js\napproval: ask\njs: {code: 'return 2'}\n",
		"name: deploy\ndescription: d\nkind: js\napproval: ask\nparameters: {type: object, properties: {x: {type: string}}}\njs: {code: 'return 1'}\n",
		"name: deploy\ndescription: d\nkind: js\napproval: ask\npermissions: [network]\njs: {code: 'return 1', allowed_domains: [example.com]}\n",
		"name: deploy\ndescription: other words\nkind: js\napproval: ask\njs: {code: 'return 1'}\n",
	} {
		if hash(other) == base {
			t.Errorf("a changed definition hashes the same:\n%s", other)
		}
	}
}
