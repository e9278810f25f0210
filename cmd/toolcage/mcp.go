package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/urfave/cli/v2"
)

func mcpCommand() *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "serve a worker's tools to an MCP client over stdio",
		UsageText: `toolcage mcp --worker NAME [--token-file FILE]

Examples:
   toolcage worker add --save-token examples/workers/data.yaml
   toolcage mcp --worker data          # started by the MCP client, not by hand`,
		Description: `The MCP client (Claude Desktop, Claude Code, an agent framework) starts
this process and speaks MCP on its stdin and stdout. It authenticates to
the daemon as the worker's agent with the worker's token, read from
--token-file or else from the file 'worker add --save-token' wrote
($XDG_CONFIG_HOME/toolcage/workers/NAME.token), never from a flag or the
environment. The token file must be mode 0600.

The daemon serves the session: this process only relays bytes between
stdio and the daemon's socket. Every call is the worker's agent's (caller
type llm, its token id in the audit log): only the worker's tools, its
approvals, limits and rate limit. A call that waits for a person's
approval stays open (with progress notifications) until the person runs
'toolcage approvals allow|deny ID'. Logs and errors go to stderr.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "worker", Usage: "serve registered worker `NAME`'s tools (required)"},
			&cli.StringFlag{Name: "token-file", Usage: "read the worker token from `FILE` (default: the --save-token file)"},
			&cli.StringFlag{Name: "session", Usage: "label the session `LABEL` in the audit log (default: mcp-<random>)"},
		},
		Action: func(cCtx *cli.Context) error {
			if cCtx.NArg() > 0 {
				return usageErrorf(cCtx, "mcp takes no arguments, got %q", cCtx.Args().First())
			}
			if cCtx.String("worker") == "" {
				return usageErrorf(cCtx, "missing --worker NAME: the worker whose tools to serve")
			}
			opts := mcpOptions{worker: cCtx.String("worker"), tokenFile: cCtx.String("token-file"), session: cCtx.String("session")}
			return runMCP(cCtx.Context, appOf(cCtx), opts)
		},
	}
}

type mcpOptions struct {
	worker    string
	tokenFile string
	session   string
}

func runMCP(ctx context.Context, a *app, opts mcpOptions) error {
	path := opts.tokenFile
	if path == "" {
		var err error
		if path, err = defaultTokenFile(opts.worker); err != nil {
			return err
		}
	}
	token, err := readTokenFile(path)
	if err != nil {
		return err
	}
	a.client.Token, a.client.Worker, a.client.Session = token, opts.worker, opts.session
	conn, err := a.client.MCPConn(ctx)
	if err != nil {
		return err
	}
	return relay(ctx, conn, a.in, a.rawOut) // the protocol's bytes, unfiltered
}

// relay copies the client's stdin to the daemon and the daemon's answers
// to stdout until either side ends. The end of stdin half-closes the
// connection, so answers already on their way still arrive; the daemon
// closing it (or ctx ending) ends the relay.
func relay(ctx context.Context, conn net.Conn, in io.Reader, out io.Writer) error {
	var once sync.Once
	closeConn := func() { once.Do(func() { conn.Close() }) }
	defer closeConn()
	stop := context.AfterFunc(ctx, closeConn)
	defer stop()
	go func() {
		_, _ = io.Copy(conn, in)
		if cw, ok := conn.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		} else {
			closeConn()
		}
	}()
	_, err := io.Copy(out, conn)
	if ctx.Err() != nil {
		return nil
	}
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("relaying MCP from the daemon: %w", err)
	}
	return nil
}
