package daemon

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/hex"
	"io"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/daemon/api"
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

// A secret a shell tool prints wrapped or compressed (base64 -w, gzip |
// base64) is redacted: the tool's stdout reaches the scrubber inside the
// result's JSON, where each line break is the two characters \n.
func TestScrubWrappedAndCompressedSecret(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	v := secretValue
	putSecret(t, c, "api_token", api.SecretValue{Value: &v})
	for name, pipe := range map[string]string{
		"wrapped":    "base64 -w 20",
		"compressed": "gzip -c | base64 -w 76",
		"hex":        "od -An -tx1 -v | tr -d ' ' ",
	} {
		create(t, c, `{"name":"`+name+`","description":"d","kind":"shell","secrets":["api_token"],
			"shell":{"command":"printf 'HOME=/home/app\\nAPI_TOKEN=%s\\nLANG=C\\n' {{secret.api_token}} | `+pipe+`"}}`)
		r, err := callTool(c, name, map[string]any{})
		if err != nil || r.IsError {
			t.Fatalf("%s: %v %+v", name, err, r)
		}
		out := shellOut(t, r).Stdout
		if !strings.Contains(out, "[REDACTED:") {
			t.Errorf("%s: nothing redacted in %q", name, out)
		}
		if strings.Contains(decodedRuns(out), secretValue) {
			t.Errorf("%s: the secret can be read back from %q", name, out)
		}
	}
}

// decodedRuns is what a reader gets from text: its lines joined, then each
// base64 run decoded (and gunzipped when it is gzip), and each hex run.
func decodedRuns(text string) string {
	joined := strings.ReplaceAll(text, "\n", "")
	var out strings.Builder
	out.WriteString(joined)
	for _, run := range strings.FieldsFunc(joined, func(r rune) bool {
		return !strings.ContainsRune("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", r)
	}) {
		for off := range 4 {
			if off >= len(run) {
				break
			}
			dec, _ := base64.RawStdEncoding.DecodeString(strings.TrimRight(run[off:][:len(run[off:])/4*4], "="))
			out.Write(dec)
			if zr, err := gzip.NewReader(bytes.NewReader(dec)); err == nil {
				b, _ := io.ReadAll(zr)
				out.Write(b)
			}
		}
		if h, err := hex.DecodeString(run[:len(run)/2*2]); err == nil {
			out.Write(h)
		}
	}
	return out.String()
}
