// Command agent plays an agent loop against toolcage's MCP server with no
// LLM: a scripted sequence an LLM would drive. It lists its worker's
// tools, calls one, makes a tool of its own (the socket API with the
// worker's token: it starts pending), waits for the person to approve it,
// then calls it: that call waits for the person's approval too, and the
// progress notifications say what the person must run.
//
//	toolcage tools create -f examples/tools/word_frequency.yaml
//	toolcage worker add --save-token examples/agent/worker.yaml
//	go run ./examples/agent --worker agent_demo
package main

import (
	"context"
	"encoding/json"
	"errors"
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

// newTool is the tool the agent makes: a shell tool, so it starts pending.
const newTool = `{"name":"shout","description":"Upper-cases a text","kind":"shell",
 "parameters":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]},
 "shell":{"command":"printf '%s\\n' {{.text}} | tr a-z A-Z"}}`

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

	// An MCP session as `toolcage mcp` opens it: the worker's agent.
	c := api.NewClient(*socket)
	c.Token, c.Worker, c.Session = strings.TrimSpace(string(b)), *worker, "example-agent"
	conn, err := c.MCPConn(ctx)
	if err != nil {
		return err
	}
	changed := make(chan struct{}, 1)
	var told atomic.Bool
	client := sdk.NewClient(&sdk.Implementation{Name: "toolcage-example-agent", Version: "1"}, &sdk.ClientOptions{
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

	fmt.Fprintln(out, "2. tools/call word_frequency")
	if err := callTool(ctx, out, cs, "word_frequency", map[string]any{"text": "the cat and the hat"}); err != nil {
		return err
	}

	fmt.Fprintln(out, "3. create a tool (POST /v1/tools with the worker token)")
	var made api.Tool
	err = c.Do(ctx, "POST", "/v1/tools", json.RawMessage(newTool), &made)
	var ae *api.Error
	if errors.As(err, &ae) && ae.Code == "conflict" {
		fmt.Fprintln(out, "   shout exists already (an earlier run made it)")
	} else if err != nil {
		return err
	} else {
		fmt.Fprintf(out, "   shout is %s\n", made.Status)
	}

	fmt.Fprintln(out, "4. wait until a person approves it; they run:")
	fmt.Fprintln(out, "   toolcage tools show shout && toolcage tools approve shout")
	for !slices.Contains(names, "shout") {
		select {
		case <-changed: // notifications/tools/list_changed
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
	return callTool(ctx, out, cs, "shout", map[string]any{"text": "made by an agent"})
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
// reported as it happens, and prints the result's text.
func callTool(ctx context.Context, out io.Writer, cs *sdk.ClientSession, name string, args any) error {
	p := &sdk.CallToolParams{Name: name, Arguments: args}
	p.SetProgressToken(name)
	r, err := cs.CallTool(ctx, p)
	if err != nil {
		return err
	}
	for _, c := range r.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			fmt.Fprintf(out, "   → %s\n", strings.TrimSpace(t.Text))
		}
	}
	if r.IsError {
		return fmt.Errorf("%s failed", name)
	}
	return nil
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
