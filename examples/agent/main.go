// Command agent plays an agent loop against toolcage's MCP server with no
// LLM: a scripted sequence an LLM would drive, over MCP only. It lists its
// worker's tools (the meta-tools among them), calls one, makes a tool of
// its own with the create_tool meta-tool (a shell tool: it starts
// pending), waits for the person to approve it (notifications/tools/
// list_changed, or tools/list now and then), then calls it: that call
// waits for the person's approval too, and the progress notifications say
// what the person must run.
//
//	toolcage tools create -f examples/tools/word_frequency.yaml
//	toolcage worker add --save-token examples/agent/worker.yaml
//	go run ./examples/agent --worker agent_demo
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcage/toolcage/daemon/api"
)

// newTool is the tool the agent makes (create_tool's arguments): a shell
// tool, so it starts pending.
var newTool = map[string]any{
	"name": "shout", "description": "Upper-cases a text", "kind": "shell",
	"parameters": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}, "required": []string{"text"}},
	"shell":      map[string]any{"command": `printf '%s\n' {{.text}} | tr a-z A-Z`},
}

// pollEvery is how often the agent lists its tools while it waits, in
// case a list_changed notification is missed.
const pollEvery = 2 * time.Second

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	worker := fs.String("worker", "agent_demo", "the registered worker to act as")
	socket := fs.String("socket", defaultSocket(), "the daemon's socket")
	tokenFile := fs.String("token-file", "", "the worker token's file (default: where worker add --save-token wrote it)")
	wait := fs.Duration("wait", 10*time.Minute, "how long to wait for the person")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *tokenFile == "" {
		dir, err := os.UserConfigDir()
		if err != nil {
			return err
		}
		*tokenFile = filepath.Join(dir, "toolcage", "workers", *worker+".token")
	}
	b, err := os.ReadFile(*tokenFile)
	if err != nil {
		return fmt.Errorf("reading the worker token: %w (register with: toolcage worker add --save-token examples/agent/worker.yaml)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *wait)
	defer cancel()

	// An MCP session as `toolcage mcp` opens it: the worker's agent. The
	// socket is only the transport: everything below is MCP.
	c := api.NewClient(*socket)
	c.Token, c.Worker, c.Session = strings.TrimSpace(string(b)), *worker, "example-agent"
	conn, err := c.MCPConn(ctx)
	if err != nil {
		return err
	}
	changed := make(chan struct{}, 1)
	var told atomic.Bool
	client := sdk.NewClient(&sdk.Implementation{Name: "toolcage-example-agent", Version: "1"}, &sdk.ClientOptions{
		// Handlers never block: a blocked one holds up the session.
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			if !told.Swap(true) { // once per wait: the person's command
				fmt.Fprintf(out, "   … %s\n", r.Params.Message)
			}
		},
	})
	cs, err := client.Connect(ctx, &sdk.IOTransport{Reader: conn, Writer: conn}, nil)
	if err != nil {
		return err
	}
	defer cs.Close()

	fmt.Fprintln(out, "1. tools/list")
	names, err := listTools(ctx, cs)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "   %s\n", strings.Join(names, ", "))
	if !slices.Contains(names, "create_tool") {
		return fmt.Errorf("worker %s offers no create_tool (its file needs agent_tools: {create: true, meta_tools: true})", *worker)
	}

	fmt.Fprintln(out, "2. tools/call word_frequency")
	if _, err := callTool(ctx, out, cs, "word_frequency", map[string]any{"text": "the cat and the hat"}); err != nil {
		return err
	}

	fmt.Fprintln(out, "3. tools/call create_tool (the meta-tool) for shout")
	r, err := callTool(ctx, out, cs, "create_tool", newTool)
	if code := errorCode(r); code == "conflict" {
		fmt.Fprintln(out, "   shout exists already (an earlier run made it)")
	} else if err != nil {
		return err
	} else {
		var made struct {
			Result struct {
				Status string `json:"status"`
			} `json:"result"`
		}
		if b, _ := json.Marshal(r.StructuredContent); json.Unmarshal(b, &made) != nil {
			return fmt.Errorf("create_tool answered %s", b)
		}
		fmt.Fprintf(out, "   shout is %s\n", made.Result.Status)
	}

	if !slices.Contains(names, "shout") {
		fmt.Fprintln(out, "4. wait until a person approves it (toolcage tools show shout to review); they run:")
		fmt.Fprintln(out, "   toolcage tools approve shout")
	}
	poll := time.NewTicker(pollEvery)
	defer poll.Stop()
	for !slices.Contains(names, "shout") {
		select {
		case <-changed: // notifications/tools/list_changed
		case <-poll.C:
		case <-ctx.Done():
			return fmt.Errorf("no approval within %s", *wait)
		}
		if names, err = listTools(ctx, cs); err != nil {
			return err
		}
	}
	fmt.Fprintln(out, "   approved: shout is listed")

	told.Store(false)
	fmt.Fprintln(out, "5. tools/call shout (an agent's tool asks for each call)")
	_, err = callTool(ctx, out, cs, "shout", map[string]any{"text": "made by an agent"})
	return err
}

func listTools(ctx context.Context, cs *sdk.ClientSession) ([]string, error) {
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, t := range res.Tools {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	return names, nil
}

// callTool calls name with a progress token, so a wait for approval is
// reported as it happens, and prints the result's text. A result that is
// an error is returned as well as the error.
func callTool(ctx context.Context, out io.Writer, cs *sdk.ClientSession, name string, args any) (*sdk.CallToolResult, error) {
	p := &sdk.CallToolParams{Name: name, Arguments: args}
	p.SetProgressToken(name)
	r, err := cs.CallTool(ctx, p)
	if err != nil {
		return nil, err
	}
	for _, c := range r.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			fmt.Fprintf(out, "   → %s\n", strings.TrimSpace(t.Text))
		}
	}
	if r.IsError {
		return r, fmt.Errorf("%s failed", name)
	}
	return r, nil
}

// errorCode is the code of a refused or failed call's result, "" for
// none.
func errorCode(r *sdk.CallToolResult) string {
	if r == nil || !r.IsError {
		return ""
	}
	var v struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	b, _ := json.Marshal(r.StructuredContent)
	_ = json.Unmarshal(b, &v)
	return v.Error.Code
}

// defaultSocket is the CLI's default socket path.
func defaultSocket() string {
	if s := os.Getenv("TOOLCAGE_SOCKET"); s != "" {
		return s
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "toolcage", "toolcage.sock")
	}
	if os.Geteuid() == 0 {
		return "/run/toolcage/toolcage.sock"
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("toolcage-%d", os.Getuid()), "toolcage.sock")
}
