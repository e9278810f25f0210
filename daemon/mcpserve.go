package daemon

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/toolcage/toolcage/daemon/apiserver"
	"github.com/toolcage/toolcage/daemon/mcp"
)

// The MCP entry points (daemon/mcp does the serving):
//
//   - GET /v1/mcp on the socket, with a worker token and "Upgrade:
//     toolcage-mcp": the connection switches protocols and carries one MCP
//     session as newline-delimited JSON-RPC, the stdio bridge's bytes as
//     they are. The bridge is a pipe; the daemon speaks MCP.
//   - mcp.listen: streamable HTTP at /mcp/{worker} on a loopback address.

// newMCP builds the MCP server over the dispatcher.
func (d *Daemon) newMCP() *mcp.Server {
	return mcp.New(mcp.Config{
		Dispatcher: d.disp, Workers: d.workers.Get, Authenticate: apiserver.TokenCaller(d.store),
		Changes: d.changes, ProgressInterval: d.cfg.MCP.ProgressInterval,
		Version: Version, Logger: d.log,
	})
}

// mcpHTTPServer serves mcp.listen, under the socket API's bounds: a body
// must arrive within api.body_timeout (lifted once read, so a call's
// stream may last), idle connections close, open ones are capped.
func (d *Daemon) mcpHTTPServer() *http.Server {
	return &http.Server{
		Handler:           bodyDeadline(d.mcp.HTTPHandler(d.cfg.MCP.SessionTimeout), d.cfg.API.BodyTimeout),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       d.cfg.API.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(d.log.Handler(), slog.LevelWarn),
	}
}
