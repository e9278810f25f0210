package dispatch

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/policy/scrub"
)

// A known value a tool writes in two pieces (two log lines; stdout and
// stderr; a log line and the result) is redacted on both sides, and the
// result stays valid JSON.
func TestScrubResultSplitAcrossWrites(t *testing.T) {
	const v = "Zk3p_Known-Secret.7781qW"
	base, err := scrub.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := base.WithKnown(map[string]string{"API_KEY": v})
	value := func(stdout, stderr string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"exit_code": 0, "stdout": stdout, "stderr": stderr})
		return b
	}
	for name, r := range map[string]*executors.Result{
		"two log lines":     {Value: json.RawMessage(`null`), Logs: []executors.LogLine{{Level: "info", Message: v[:8]}, {Level: "info", Message: v[8:]}}},
		"stdout and stderr": {Value: value(v[:13]+"\n", v[13:]+"\n")},
		"stderr first":      {Value: value(v[10:], v[:10])},
		"log, then result":  {Value: json.RawMessage(`"` + v[6:] + `"`), Logs: []executors.LogLine{{Level: "info", Message: v[:6]}}},
	} {
		n := scrubResult(s, r)
		all, _ := json.Marshal(r)
		var out struct {
			Stdout, Stderr string
		}
		_ = json.Unmarshal(r.Value, &out)
		joined := out.Stdout + out.Stderr + out.Stderr + out.Stdout + string(all)
		for _, l := range r.Logs {
			joined += l.Message
		}
		joined = strings.NewReplacer("\n", "", `\n`, "", `"`, "", ",", "").Replace(joined)
		if n == 0 || strings.Contains(joined, v) || !json.Valid(r.Value) {
			t.Errorf("%s: %d markers, %s", name, n, all)
		}
	}
}

// A secret a JS tool returns as the array of its bytes' values is found
// across the array's commas; the result is then its scrubbed text, as a
// string, since the redaction does not fit between the numbers.
func TestScrubJSONByteArray(t *testing.T) {
	const v = "Zk3p_Known-Secret.7781qW"
	base, err := scrub.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := base.WithKnown(map[string]string{"API_KEY": v})
	codes := make([]int, len(v))
	for i := range v {
		codes[i] = int(v[i])
	}
	raw, _ := json.Marshal(map[string]any{"codes": codes, "note": "fine"})
	out := scrubJSON(s, raw)
	if !json.Valid(out) || !strings.Contains(string(out), "[REDACTED:secret:API_KEY]") || strings.Contains(string(out), "90,107,51") {
		t.Errorf("byte array: %s → %s", raw, out)
	}
	// An ordinary array of numbers stays as it is.
	plain := json.RawMessage(`{"codes":[1,2,3,4,5,6,7,8,9,10],"n":200}`)
	if out := scrubJSON(s, plain); string(out) != string(plain) {
		t.Errorf("plain array changed: %s", out)
	}
}
