package scrub

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

// jsonOut is a shell tool's result as the executor writes it.
func jsonOut(stdout, stderr string) string {
	b, _ := json.Marshal(map[string]any{"exit_code": 0, "stdout": stdout, "stderr": stderr})
	return string(b)
}

// TestScrubAcrossParts: a known value split across two writes (two log
// lines, stdout and stderr, two strings of a result, a log line and the
// result) is redacted on both sides, whichever order the reader joins
// them in; parts that hold no such split stay.
func TestScrubAcrossParts(t *testing.T) {
	const v = encodingsSecret
	b64 := base64.StdEncoding.EncodeToString([]byte("the value is " + v + " ok\n"))
	tests := []struct {
		name  string
		parts []Part
		split bool // the value is split across them
	}{
		{"two log lines", []Part{{Text: v[:10]}, {Text: v[10:]}}, true},
		{"two log lines, echo", []Part{{Text: v[:10] + "\n"}, {Text: v[10:] + "\n"}}, true},
		{"stdout then stderr", []Part{{Text: jsonOut(v[:7], v[7:]+"\n"), JSON: true}}, true},
		{"stderr holds the start", []Part{{Text: jsonOut(v[12:]+"\n", "x="+v[:12]), JSON: true}}, true},
		{"two strings of an array", []Part{{Text: `["` + v[:5] + `","` + v[5:] + `"]`, JSON: true}}, true},
		{"log line, then the result", []Part{{Text: "first part " + v[:9]}, {Text: `{"rest":"` + v[9:] + `"}`, JSON: true}}, true},
		{"base64 split over two writes", []Part{{Text: b64[:len(b64)/2]}, {Text: b64[len(b64)/2:]}}, true},
		{"three parts, split in the middle one's neighbours", []Part{{Text: "start"}, {Text: v[:11]}, {Text: v[11:]}, {Text: "end"}}, true},
		{"xxd, its first line on stdout, the rest on stderr", []Part{{Text: jsonOut(xxdLines(v)[0]+"\n", strings.Join(xxdLines(v)[1:], "\n")), JSON: true}}, true},
		{"ordinary output", []Part{{Text: jsonOut("hello\n", "warning: x\n"), JSON: true}, {Text: "log line"}, {Text: "another"}}, false},
		{"the value's halves far apart", []Part{{Text: v[:10] + strings.Repeat(" filler", 20)}, {Text: "other"}}, false},
	}
	s := newTestScrubber(t, map[string]string{"API_KEY": v})
	for _, tc := range tests {
		in := make([]Part, len(tc.parts))
		for i, p := range tc.parts {
			in[i] = Part{Text: s.Scrub(p.Text), JSON: p.JSON}
		}
		out := s.ScrubAcross(in)
		joined := strings.Join(out, "")
		if tc.split {
			if !strings.Contains(joined, "[REDACTED:secret:API_KEY]") {
				t.Errorf("%s: nothing redacted: %q", tc.name, out)
			}
			for _, read := range []string{strings.Join(out, ""), strings.Join(reversedParts(out), ""), unjson(out)} {
				if strings.Contains(joinLines(read), v) || strings.Contains(b64Tolerant(base64.StdEncoding)(read), v) {
					t.Errorf("%s: the value can be read back from %q", tc.name, out)
				}
			}
			for i, p := range in {
				if p.JSON && !json.Valid([]byte(out[i])) {
					t.Errorf("%s: JSON part %d no longer valid: %s", tc.name, i, out[i])
				}
			}
			continue
		}
		for i := range in {
			if out[i] != in[i].Text {
				t.Errorf("%s: part %d changed: %q → %q", tc.name, i, in[i].Text, out[i])
			}
		}
	}
	// A call without known values is left as it is.
	plain := newTestScrubber(t, nil)
	if got := plain.ScrubAcross([]Part{{Text: v[:10]}, {Text: v[10:]}}); got[0] != v[:10] || got[1] != v[10:] {
		t.Errorf("no known values: %q", got)
	}
}

func reversedParts(p []string) []string {
	r := make([]string, len(p))
	for i := range p {
		r[i] = p[len(p)-1-i]
	}
	return r
}

// unjson joins the string values of the JSON parts (and the others) the
// way a reader of stdout and stderr would, in both orders.
func unjson(parts []string) string {
	var b strings.Builder
	for _, p := range parts {
		var m map[string]any
		if json.Unmarshal([]byte(p), &m) != nil {
			b.WriteString(p)
			continue
		}
		so, _ := m["stdout"].(string)
		se, _ := m["stderr"].(string)
		b.WriteString(so + se + "\n" + se + so + "\n")
	}
	return b.String()
}

func xxdLines(v string) []string {
	return strings.Split(strings.TrimSuffix(xxdDump([]byte(v+"\n"), 2, 16, false), "\n"), "\n")
}
