package ui

import (
	"encoding/json"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseWhat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want What
	}{
		{`["ls","-l","/tmp"]`, What{Kind: "argv", Argv: []string{"ls", "-l", "/tmp"}}},
		{`env {"TOKEN":"[REDACTED]","A":"b c"} ["curl","-s"]`, What{Kind: "argv", Env: []EnvVar{{"A", "b c"}, {"TOKEN", "[REDACTED]"}}, Argv: []string{"curl", "-s"}}},
		{`sh -c "echo hi | wc -l"`, What{Kind: "sh", Command: "echo hi | wc -l"}},
		{`env {"X":"1"} sh -c "echo $X"`, What{Kind: "sh", Env: []EnvVar{{"X", "1"}}, Command: "echo $X"}},
		{`GET https://api.example.com/v1/x?key=REDACTED`, What{Kind: "http", Method: "GET", URL: "https://api.example.com/v1/x?key=REDACTED"}},
		{`sha256:0123abcd`, What{Kind: "js", Hash: "sha256:0123abcd"}},
		// Anything else is shown as it is.
		{``, What{Kind: "text"}},
		{`FETCH https://x`, What{Kind: "text"}},
		{`GET`, What{Kind: "text"}},
		{`[]`, What{Kind: "text"}},
		{`["a",`, What{Kind: "text"}},
		{`sh -c "unterminated`, What{Kind: "text"}},
		{`env {"A":1} ["x"]`, What{Kind: "text"}},
		{`env {"A":"1"} GET https://x`, What{Kind: "text"}},
		{`env {"A":"1"} sha256:00`, What{Kind: "text"}},
	} {
		got := parseWhat(tc.in)
		tc.want.Text = tc.in
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseWhat(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// FuzzParseWhat: any rendered text reads without a panic, and what is
// shown keeps the whole text.
func FuzzParseWhat(f *testing.F) {
	for _, s := range []string{`["ls"]`, `env {"A":"b"} ["x"]`, `sh -c "a|b"`, `env {} sh -c ""`, `GET http://h/`,
		`sha256:ab`, `env {`, `env {"a":"b"}`, `env {"a":"b"}["x"]`, "sh -c \"\\ud800\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w := parseWhat(s)
		if w.Text != s {
			t.Fatalf("Text %q, want %q", w.Text, s)
		}
		switch w.Kind {
		case "argv":
			if len(w.Argv) == 0 {
				t.Fatal("argv with no words")
			}
		case "sh", "http", "js", "text":
		default:
			t.Fatalf("kind %q", w.Kind)
		}
	})
}

func TestDefinitionDiff(t *testing.T) {
	a := json.RawMessage(`{"name":"t","kind":"shell","shell":{"command":"ls"}}`)
	b := json.RawMessage(`{"name":"t","kind":"shell","shell":{"command":"rm -rf /tmp/x"}}`)
	if d := definitionDiff(a, a, "a", "b"); d != nil {
		t.Errorf("same definitions differ: %v", d)
	}
	d := definitionDiff(a, b, "version 1 (approved)", "version 2 (pending)")
	var ops strings.Builder
	for _, l := range d {
		ops.WriteString(l.Op)
	}
	if ops.String() != "@@@   -+" || d[0].Text != "--- version 1 (approved)" || d[6].Text != "-  command: ls" {
		t.Errorf("diff %q: %+v", ops.String(), d)
	}
	if got := definitionYAML(json.RawMessage(`{"b":1,"a":[true]}`)); got != "a:\n- true\nb: 1\n" {
		t.Errorf("yaml of bad JSON: %q", got)
	}
}

func TestParseAuditFilter(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	long := strings.Repeat("x", maxFilterField)
	for _, tc := range []struct {
		q       string
		want    AuditFilter
		wantErr string
	}{
		{"", AuditFilter{Limit: defaultAuditLimit}, ""},
		{"tool=adder&caller=uid:0&worker=w&outcome=refused", AuditFilter{Tool: "adder", Caller: "uid:0", Worker: "w", Outcome: "refused", Limit: defaultAuditLimit}, ""},
		{"since=90m&until=30m", AuditFilter{Since: now.Add(-90 * time.Minute), Until: now.Add(-30 * time.Minute), Limit: defaultAuditLimit}, ""},
		{"since=2026-04-30T10:00:00Z", AuditFilter{Since: time.Date(2026, 4, 30, 10, 0, 0, 0, time.UTC), Limit: defaultAuditLimit}, ""},
		{"limit=1", AuditFilter{Limit: 1}, ""},
		{"limit=1000", AuditFilter{Limit: maxAuditLimit}, ""},
		{"tool=" + long, AuditFilter{Tool: long, Limit: defaultAuditLimit}, ""},
		{"limit=0", AuditFilter{}, "limit must be"},
		{"limit=1001", AuditFilter{}, "limit must be"},
		{"limit=x", AuditFilter{}, "limit must be"},
		{"outcome=great", AuditFilter{}, "outcome must be"},
		{"since=yesterday", AuditFilter{}, "is not a time"},
		{"since=-1h", AuditFilter{}, "without a sign"},
		{"since=10m&until=1h", AuditFilter{}, "since must be before until"},
		{"tool=" + long + "x", AuditFilter{}, "at most 256"},
	} {
		q, _ := url.ParseQuery(tc.q)
		got, err := parseAuditFilter(q, now)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: err %v, want %q", tc.q, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %+v %v, want %+v", tc.q, got, err, tc.want)
		}
	}
	// A local date and time is the daemon's local time.
	q := url.Values{"since": {"2026-04-30T10:00"}}
	got, err := parseAuditFilter(q, now)
	if err != nil || !got.Since.Equal(time.Date(2026, 4, 30, 10, 0, 0, 0, time.Local)) {
		t.Errorf("local since: %v %v", got.Since, err)
	}
}

// FuzzParseAuditFilter: any query parses or fails cleanly, and what it
// returns is within bounds.
func FuzzParseAuditFilter(f *testing.F) {
	for _, s := range []string{"tool=a&since=1h", "since=2026-01-01", "limit=5&outcome=ok", "until=%00", "since=9999999h"} {
		f.Add(s)
	}
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		q, err := url.ParseQuery(s)
		if err != nil {
			return
		}
		got, err := parseAuditFilter(q, now)
		if err != nil {
			return
		}
		if got.Limit < 1 || got.Limit > maxAuditLimit || len(got.Tool) > maxFilterField ||
			(!got.Since.IsZero() && !got.Until.IsZero() && !got.Since.Before(got.Until)) {
			t.Fatalf("%q gave %+v", s, got)
		}
	})
}
