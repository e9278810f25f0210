package api

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestReadEvents(t *testing.T) {
	stream := ": keep-alive\n\n" +
		"event: approval\nid: abcd2345\ndata: {\"id\":\"abcd2345\"}\n\n" +
		"data: line one\ndata: line two\n\n" + // no name: message; data lines join with \n
		"event: execution\r\nid: c1\r\ndata:{\"x\":1}\r\n\r\n" + // CRLF, no space after the colon
		"event: ignored\n\n" + // no data: no event
		"retry: 1000\nunknown: x\nevent: overflow\ndata: {}\n\n" +
		"event: cut\ndata: never finished\n" // no blank line: not dispatched
	var got []Event
	err := ReadEvents(strings.NewReader(stream), func(ev Event) error { got = append(got, ev); return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{
		{Name: "approval", ID: "abcd2345", Data: []byte(`{"id":"abcd2345"}`)},
		{Name: "message", Data: []byte("line one\nline two")},
		{Name: "execution", ID: "c1", Data: []byte(`{"x":1}`)},
		{Name: "overflow", Data: []byte(`{}`)},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d events: %+v", len(got), got)
	}
	for i := range want {
		if got[i].Name != want[i].Name || got[i].ID != want[i].ID || string(got[i].Data) != string(want[i].Data) {
			t.Errorf("event %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	stop := errors.New("stop")
	n := 0
	if err := ReadEvents(strings.NewReader(stream), func(Event) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Errorf("fn's error: %v after %d", err, n)
	}
	// A line past the bound is an error, not a hang or a huge allocation.
	long := "data: " + strings.Repeat("x", maxEventLine+1) + "\n\n"
	if err := ReadEvents(strings.NewReader(long), func(Event) error { return nil }); err == nil {
		t.Error("an oversized line was read")
	}
}

func FuzzReadEvents(f *testing.F) {
	for _, s := range []string{"event: a\ndata: b\n\n", "data:\n\n", ":\n\n", "id\ndata\n\n", "\r\n\r\n", "event: x\r\ndata: y\r\n\r\n", "data: a\ndata: b\n\n\n\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = ReadEvents(strings.NewReader(s), func(ev Event) error {
			if ev.Name == "" {
				t.Fatalf("an event with no name from %q", s)
			}
			if strings.ContainsAny(ev.Name, "\n") || strings.ContainsAny(ev.ID, "\n") {
				t.Fatalf("a name or id spans lines: %+v", ev)
			}
			return nil
		})
	})
}

func TestParseTime(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		in      string
		want    time.Time
		wantErr bool
	}{
		{"2026-02-28T10:00:00Z", time.Date(2026, 2, 28, 10, 0, 0, 0, time.UTC), false},
		{"2026-02-28T10:00:00.123456789+02:00", time.Date(2026, 2, 28, 8, 0, 0, 123456789, time.UTC), false},
		{"1h", now.Add(-time.Hour), false},
		{"90m", now.Add(-90 * time.Minute), false},
		{"0s", now, false},
		{"720h", now.Add(-720 * time.Hour), false},
		{"-1h", time.Time{}, true},
		{"1d", time.Time{}, true},
		{"yesterday", time.Time{}, true},
		{"2026-02-28", time.Time{}, true},
		{"", time.Time{}, true},
	} {
		got, err := ParseTime(tt.in, now)
		if (err != nil) != tt.wantErr || !got.Equal(tt.want) {
			t.Errorf("%q: %v %v, want %v (error %v)", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}
