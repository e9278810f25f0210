package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcage/toolcage/daemon"
	"github.com/toolcage/toolcage/internal/testutil"
)

// toolcageCmd is the toolcage binary `make build` left in TOOLCAGE_BIN_DIR,
// or else this test binary running as the CLI (cliProcess).
func toolcageCmd(env []string, stderr *bytes.Buffer, args ...string) *exec.Cmd {
	var cmd *exec.Cmd
	if bin := os.Getenv("TOOLCAGE_BIN_DIR"); bin != "" {
		if p := filepath.Join(bin, "toolcage"); testutil.IsFile(p) {
			cmd = exec.Command(p, args...)
			cmd.Env = os.Environ()
		}
	}
	if cmd == nil {
		cmd = cliProcess(nil, nil, args...)
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = stderr
	return cmd
}

// `toolcage mcp` as an MCP client starts it: a process on a real stdio
// pipe, the SDK's client on the other end, the daemon behind it.
func TestMCPStdioBridge(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"city":%q}`, strings.TrimPrefix(r.URL.Path, "/forecast/"))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	ld := launchDaemon(t, func(c *daemon.Config) {
		c.HTTP.AllowPrivateHosts = []string{"localhost"}
		c.MCP.ProgressInterval = 50 * time.Millisecond
	})
	sock := ld.socket
	createTool(t, sock, jsDef("adder", "return args.a + args.b"))
	createTool(t, sock, jsDef("asker", "return 'asked'", "approval: ask"))
	createTool(t, sock, `{"name":"echo_it","description":"echo","kind":"shell",
		"parameters":{"type":"object","properties":{"msg":{"type":"string"}},"required":["msg"]},"shell":{"command":"echo {{.msg}}"}}`)
	createTool(t, sock, `{"name":"list_dir","description":"ls","kind":"shell",
		"parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]},"shell":{"command":"ls {{.path}}"}}`)
	createTool(t, sock, `{"name":"weather","description":"forecast","kind":"http","http":{"method":"GET",
		"url":"http://localhost:`+u.Port()+`/forecast/{{city}}","allowed_domains":["localhost"]}}`)
	dir := t.TempDir()
	wfile := filepath.Join(dir, "bridge.yaml")
	if err := os.WriteFile(wfile, []byte("name: bridge\ntools: [adder, asker, echo_it, list_dir, weather]\nagent_tools: {create: true}\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	// worker add --save-token writes the token where `toolcage mcp`
	// looks by default, 0600, and does not print it.
	xdg := "XDG_CONFIG_HOME=" + filepath.Join(dir, "config")
	var errb bytes.Buffer
	add := toolcageCmd([]string{xdg}, &errb, "--socket", sock, "worker", "add", "--save-token", wfile)
	out, err := add.Output()
	tokenPath := filepath.Join(dir, "config", "toolcage", "workers", "bridge.token")
	if err != nil || !strings.Contains(string(out), "Token written to "+tokenPath) || strings.Contains(string(out), "tcw_") {
		t.Fatalf("worker add --save-token: %v\n%s%s", err, out, errb.String())
	}
	if st, err := os.Stat(tokenPath); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", st, err)
	}

	var stderr bytes.Buffer
	cmd := toolcageCmd([]string{xdg}, &stderr, "--socket", sock, "mcp", "--worker", "bridge", "--session", "stdio-test")
	listChanged := make(chan struct{}, 16)
	progress := make(chan *sdk.ProgressNotificationParams, 64)
	cl := sdk.NewClient(&sdk.Implementation{Name: "bridge-test", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { offer(listChanged, struct{}{}) },
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			offer(progress, r.Params)
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := cl.Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer cs.Close()

	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if want := []string{"adder", "asker", "echo_it", "list_dir", "weather"}; !slices.Equal(names, want) {
		t.Fatalf("tools: %v, want %v", names, want)
	}
	text := func(r *sdk.CallToolResult) string {
		if len(r.Content) == 0 {
			return ""
		}
		return r.Content[0].(*sdk.TextContent).Text
	}
	call := func(name string, args any) *sdk.CallToolResult {
		t.Helper()
		r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, stderr.String())
		}
		return r
	}
	if r := call("adder", map[string]any{"a": 2, "b": 40}); r.IsError || text(r) != "42" {
		t.Fatalf("adder: %+v", r)
	}
	if r := call("echo_it", map[string]any{"msg": "via stdio"}); r.IsError || !strings.Contains(text(r), `"stdout":"via stdio\n"`) {
		t.Fatalf("echo_it: %s", text(r))
	}
	if r := call("weather", map[string]any{"city": "Oslo"}); r.IsError || !strings.Contains(text(r), `"city":"Oslo"`) {
		t.Fatalf("weather: %s", text(r))
	}
	if r := call("list_dir", map[string]any{"path": "--help"}); !r.IsError || !strings.HasPrefix(text(r), "policy_denied: ") {
		t.Fatalf("refusal: %+v %s", r, text(r))
	}

	// An approval wait, resolved by the person with the CLI.
	go func() {
		var id string
		for id == "" && ctx.Err() == nil {
			r := runProcess("--socket", sock, "approvals", "list", "--json")
			if m := regexp.MustCompile(`"id": "([a-z2-7]{8})"`).FindStringSubmatch(r.out); m != nil {
				id = m[1]
			}
			time.Sleep(20 * time.Millisecond)
		}
		select {
		case <-progress: // the caller is told it waits, before the person decides
		case <-ctx.Done():
		}
		runProcess("--socket", sock, "approvals", "allow", id)
	}()
	params := &sdk.CallToolParams{Name: "asker", Arguments: map[string]any{}}
	params.SetProgressToken(7)
	r, err := cs.CallTool(ctx, params)
	if err != nil || r.IsError || text(r) != "asked" {
		t.Fatalf("asker: %+v %v", r, err)
	}

	// list_changed when the worker's tool set changes: its file gains a
	// tool (reloaded by the daemon's watcher), a person disables one.
	createTool(t, sock, jsDef("late_tool", "return 'late'"))
	drainSignals(listChanged)
	if err := os.WriteFile(wfile, []byte("name: bridge\ntools: [adder, asker, echo_it, list_dir, weather, late_tool]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, listChanged, "after the worker file gained a tool")
	if r := call("late_tool", nil); r.IsError || text(r) != "late" {
		t.Fatalf("late_tool: %+v", r)
	}
	drainSignals(listChanged)
	mustOK(t, sock, "tools", "disable", "weather")
	waitSignal(t, listChanged, "after a tool was disabled")
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "weather", Arguments: map[string]any{"city": "x"}}); err == nil {
		t.Fatal("a disabled tool is still served")
	}

	// The calls were the worker's agent's, under its session label.
	es := audit(t, sock, "adder")
	if len(es) != 1 || es[0].CallerType != "llm" || es[0].Worker != "bridge" || es[0].TokenID == "" || es[0].Session != "stdio-test" {
		t.Fatalf("audit: %+v", es)
	}

	// Revoked: the open session's next call is refused.
	mustOK(t, sock, "worker", "token", "revoke", "bridge")
	if r := call("adder", map[string]any{"a": 1, "b": 1}); !r.IsError || !strings.HasPrefix(text(r), "unauthorized: ") {
		t.Fatalf("after revoke: %+v", r)
	}
}

// offer hands v to a test's channel without blocking: a client's
// notification handler that blocks holds up its whole session (and its
// Close), and a slow machine sends many progress notifications.
func offer[T any](ch chan T, v T) {
	select {
	case ch <- v:
	default:
	}
}

func drainSignals(ch chan struct{}) {
	for len(ch) > 0 {
		<-ch
	}
}

func waitSignal(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("no notifications/tools/list_changed %s", what)
	}
}

// The bridge refuses a token file others may read, one that is missing or
// holds no token, and a revoked token, before any MCP is spoken.
func TestMCPBridgeTokenFile(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	createTool(t, sock, jsDef("adder", "return 1"))
	dir := t.TempDir()
	wfile := filepath.Join(dir, "tf.yaml")
	if err := os.WriteFile(wfile, []byte("name: tf\ntools: [adder]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tfile := filepath.Join(dir, "tf.token")
	r := mustOK(t, sock, "worker", "add", "--token-file", tfile, wfile)
	if !strings.Contains(r.out, "Token written to "+tfile) || strings.Contains(r.out, "tcw_") {
		t.Fatalf("worker add --token-file: %v", r)
	}
	wantExit(t, tc(t, sock, "worker", "add", "--token-file", tfile, "--save-token", wfile), exitUsage, "not both")

	wantExit(t, tc(t, sock, "mcp"), exitUsage, "worker")
	wantExit(t, tc(t, sock, "mcp", "--worker", "tf", "--token-file", filepath.Join(dir, "none")), exitRefused, "no token file")
	if err := os.Chmod(tfile, 0o644); err != nil {
		t.Fatal(err)
	}
	wantExit(t, tc(t, sock, "mcp", "--worker", "tf", "--token-file", tfile), exitUsage, "open to others")
	junk := filepath.Join(dir, "junk.token")
	if err := os.WriteFile(junk, []byte("hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wantExit(t, tc(t, sock, "mcp", "--worker", "tf", "--token-file", junk), exitUsage, "does not hold a worker token")

	// Rotated into the same file: the new token works (the bridge ends
	// at once here: stdin is empty), the old one would not.
	if err := os.Chmod(tfile, 0o600); err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(tfile)
	r = mustOK(t, sock, "worker", "token", "rotate", "--token-file", tfile, "--json", "tf")
	var saved struct {
		TokenFile string `json:"token_file"`
		TokenID   string `json:"token_id"`
	}
	if err := json.Unmarshal([]byte(r.out), &saved); err != nil || saved.TokenFile != tfile || saved.TokenID == "" || strings.Contains(r.out, "tcw_") {
		t.Fatalf("rotate --token-file --json: %v %v", r, err)
	}
	if now, _ := os.ReadFile(tfile); bytes.Equal(now, old) {
		t.Fatal("rotate did not replace the token file")
	}
	mustOK(t, sock, "mcp", "--worker", "tf", "--token-file", tfile)
	if err := os.WriteFile(junk, old, 0o600); err != nil {
		t.Fatal(err)
	}
	wantExit(t, tc(t, sock, "mcp", "--worker", "tf", "--token-file", junk), exitRefused, "unauthorized")
	wantExit(t, tc(t, sock, "mcp", "--worker", "other", "--token-file", tfile), exitRefused, "forbidden")
}
