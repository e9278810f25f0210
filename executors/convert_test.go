package executors

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	protobuf "google.golang.org/protobuf/proto"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors/proto"
	"github.com/toolcage/toolcage/principal"
)

// wire sends m through its encoded form, as gRPC does.
func wire[M protobuf.Message](t testing.TB, m M, empty M) M {
	t.Helper()
	b, err := protobuf.Marshal(m)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	if err := protobuf.Unmarshal(b, empty); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	return empty
}

func TestRequestRoundTrip(t *testing.T) {
	caller := principal.Caller{ID: "uid:1000", Type: "llm", Worker: "ops"}
	limits := Limits{Timeout: 1500 * time.Millisecond, MemoryBytes: 64 << 20, OutputBytes: 1 << 20, Requests: 7}
	tests := []*Request{
		{CallID: "c1", Tool: "add", Version: 3, Caller: caller, Kind: KindJS, Args: json.RawMessage(`{"a":1}`),
			Permissions: []string{"network"}, Limits: limits,
			JS: &JSCall{Code: "return args.a", AllowedDomains: []string{"api.example.com"}, AllowPrivateHosts: []string{"127.0.0.1"},
				Secrets: map[string]string{"k": `{"value":"v"}`}}},
		{CallID: "c2", Tool: "dig", Version: 1, Caller: caller, Kind: KindShell, Args: json.RawMessage(`{}`), Limits: limits,
			Shell: &ShellCall{Argv: []string{"dig", "+short", "example.com"}, Env: map[string]string{"A": "b"}, Dir: "/tmp/w"}},
		{CallID: "c3", Tool: "sh", Kind: KindShell, Shell: &ShellCall{Command: "echo 'a' | wc -c"}},
		{CallID: "c4", Tool: "weather", Version: 2, Caller: caller, Kind: KindHTTP, Limits: limits,
			HTTP: &HTTPCall{Method: "POST", URL: "https://api.example.com/x?q=1", Headers: map[string]string{"Accept": "application/json"},
				Body: []byte(`{"q":1}`), AllowedDomains: []string{"api.example.com"}, MaxResponseBytes: 1000,
				Egress: &Egress{Addr: "127.0.0.1:4000", Token: "tok"}}},
		{CallID: "c5", Tool: "plain", Kind: KindHTTP, HTTP: &HTTPCall{Method: "GET", URL: "https://a.example/"}},
		{CallID: "c6", Tool: "read_file", Kind: KindFS, FS: &FSCall{Op: "edit_file", Root: "/workspace", ReadOnly: true, Path: "a/b.txt", Content: "c", Find: "f", Replace: "r",
			Pattern: "p", StartLine: 2, EndLine: 9, MaxReadBytes: 10, MaxWriteBytes: 20, MaxMatches: 30}},
	}
	for _, want := range tests {
		t.Run(want.CallID, func(t *testing.T) {
			got := requestFromProto(wire(t, requestToProto(want), &proto.ExecuteRequest{}))
			if !reflect.DeepEqual(got, want) {
				t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// The caller's profile is the daemon's business: it never reaches an executor.
func TestRequestDropsProfile(t *testing.T) {
	req := &Request{Kind: KindJS, Caller: principal.Caller{ID: "x", Type: "user", Profile: "narrow"}, JS: &JSCall{Code: "1"}}
	if got := requestFromProto(requestToProto(req)).Caller.Profile; got != "" {
		t.Fatalf("profile %q crossed the wire", got)
	}
}

func TestResultRoundTrip(t *testing.T) {
	tests := []*Result{
		{Value: json.RawMessage(`{"ok":true}`), Logs: []LogLine{{Level: "info", Message: "a"}, {Level: "warn", Message: "b"}},
			OutputBytes: 42, Duration: 3 * time.Millisecond},
		{Value: json.RawMessage(`"partial"`), IsError: true, Error: "exit status 3", OutputBytes: 9, Truncated: true, Duration: time.Second},
		{Value: json.RawMessage(`null`)},
	}
	for i, want := range tests {
		got, err := resultFromProto(wire(t, resultToProto(want, nil), &proto.ExecuteResponse{}))
		if err != nil {
			t.Fatalf("%d: err %v", i, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%d: round trip:\n got %+v\nwant %+v", i, got, want)
		}
	}
}

// Every stable code and every limit crosses the wire unchanged.
func TestErrorRoundTrip(t *testing.T) {
	if len(codeToProto) != len(errdefs.Codes) || len(codeFromProto) != len(errdefs.Codes) {
		t.Fatalf("the wire maps %d/%d codes, errdefs has %d", len(codeToProto), len(codeFromProto), len(errdefs.Codes))
	}
	limits := append([]string{""}, errdefs.LimitNames...)
	for _, code := range errdefs.Codes {
		for _, limit := range limits {
			for _, e := range []*errdefs.Error{
				{Code: code, Limit: limit, Op: "execute", Err: errors.New("it broke")},
				{Code: code, Limit: limit},
			} {
				res, err := resultFromProto(wire(t, resultToProto(nil, e), &proto.ExecuteResponse{}))
				if res != nil {
					t.Fatalf("%v: a result came back with the error", e)
				}
				wantError(t, err, e)
			}
		}
	}
}

func wantError(t *testing.T, err error, want *errdefs.Error) {
	t.Helper()
	var got *errdefs.Error
	if !errors.As(err, &got) {
		t.Fatalf("%v: got %T %v, want an *errdefs.Error", want, err, err)
	}
	if got.Code != want.Code || got.Limit != want.Limit || got.Op != want.Op || got.Error() != want.Error() || (got.Err == nil) != (want.Err == nil) {
		t.Errorf("round trip: got {%s %q %q %v}, want {%s %q %q %v}", got.Code, got.Limit, got.Op, got.Err, want.Code, want.Limit, want.Op, want.Err)
	}
}

// Wrapping keeps the code; an error without one goes as internal, whole.
func TestErrorToProtoOther(t *testing.T) {
	wrapped := fmt.Errorf("running: %w", errdefs.LimitError(errdefs.LimitMemory, "heap over %d", 10))
	_, err := resultFromProto(resultToProto(nil, wrapped))
	wantError(t, err, &errdefs.Error{Code: errdefs.LimitExceeded, Limit: errdefs.LimitMemory, Err: errors.New("heap over 10")})

	_, err = resultFromProto(resultToProto(nil, errors.New("plain")))
	wantError(t, err, &errdefs.Error{Code: errdefs.Internal, Err: errors.New("plain")})

	_, err = resultFromProto(resultToProto(nil, nil))
	wantError(t, err, &errdefs.Error{Code: errdefs.Internal, Err: errors.New("executor returned no result")})
}

func FuzzErrorRoundTrip(f *testing.F) {
	f.Add(uint8(0), "timeout", "execute", "took too long")
	f.Add(uint8(13), "", "", "")
	f.Add(uint8(200), "memory", "op\x00", "\xff")
	f.Fuzz(func(t *testing.T, ci uint8, limit, op, msg string) {
		e := &errdefs.Error{Code: errdefs.Codes[int(ci)%len(errdefs.Codes)], Limit: limit, Op: op}
		if msg != "" {
			e.Err = errors.New(msg)
		}
		b, err := protobuf.Marshal(resultToProto(nil, e))
		if err != nil {
			// proto3 strings must be UTF-8: such an error cannot be sent,
			// but converting it must not break.
			return
		}
		back := &proto.ExecuteResponse{}
		if err := protobuf.Unmarshal(b, back); err != nil {
			t.Fatalf("unmarshal: %v", err)
		}
		_, got := resultFromProto(back)
		wantError(t, got, e)
	})
}
