package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/daemon/catalog"
)

// TestDefinitionYAMLQuotesYAML11Words: definitions are read as YAML 1.1
// (catalog.Parse), where yes/no/on/off/y/n are booleans and 1:20 is a
// number; definitionYAML quotes such strings, keys included.
func TestDefinitionYAMLQuotesYAML11Words(t *testing.T) {
	def := json.RawMessage(`{"name":"light","description":"no","kind":"js","category":"on",` +
		`"parameters":{"type":"object","properties":{"y":{"type":"number"},"state":{"type":"string","enum":["on","off","Yes","N","1:20","plain"]}}},` +
		`"js":{"code":"return 1"}}`)
	out, err := definitionYAML(def)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\ndescription: \"no\"\n", "\ncategory: \"on\"\n", "\n    \"y\":\n", `enum: ["on", "off", "Yes", "N", '1:20', plain]`, "\n  code: return 1\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("YAML lacks %q:\n%s", want, out)
		}
	}
	back, err := catalog.Parse([]byte(out))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want, err := catalog.ParseJSON(def)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(back)
	w, _ := json.Marshal(want)
	if !sameJSON(t, b, w) {
		t.Errorf("read back as\n%s\nwant\n%s", b, w)
	}
}
