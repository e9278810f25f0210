package daemon

import (
	"strings"
	"testing"
)

// The config's own scrub rules redact tool output like the built-in ones.
func TestScrubConfigRules(t *testing.T) {
	td := startDaemon(t, "", func(c *Config) {
		c.Scrub.Rules = []ScrubRuleConfig{{Kind: "acme-token", Pattern: `\b(acme_[A-Za-z0-9]{32})\b`, SecretGroup: 1, Keywords: []string{"acme_"}, MinEntropy: 3}}
	})
	create(t, td.client, `{"name":"leak","description":"d","kind":"shell","shell":{"command":"echo key acme_Zq8vK2mXw9rTj4LpZq8vK2mXw9rTj4Lp"}}`)
	r, err := callTool(td.client, "leak", map[string]any{})
	if err != nil || r.IsError {
		t.Fatalf("leak: %v %+v", err, r)
	}
	if out := shellOut(t, r).Stdout; out != "key [REDACTED:acme-token]\n" {
		t.Fatalf("stdout %q", out)
	}
}

func TestScrubConfigRuleRefused(t *testing.T) {
	_, err := LoadConfig("", map[string]any{"scrub.rules": []map[string]any{{"kind": "x", "pattern": "("}}})
	if err == nil || !strings.Contains(err.Error(), "scrub.rules[0]") {
		t.Fatalf("bad rule: %v", err)
	}
}
