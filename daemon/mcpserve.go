package daemon

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/toolcage/toolcage/daemon/api"
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
// stream may last), idle connections close, and headers must come within
// mcp.header_timeout. A connection counts against its worker's
// connections once a request on it brings a valid token (mcpClaim);
// until then it is one of at most mcp.max_unauthenticated, the oldest of
// which a new connection closes, so connections that never authenticate
// cannot keep the agents out.
func (d *Daemon) mcpHTTPServer() *http.Server {
	return &http.Server{
		Handler:           bodyDeadline(d.mcpClaim(d.mcp.HTTPHandler(d.cfg.MCP.SessionTimeout)), d.cfg.API.BodyTimeout),
		ReadHeaderTimeout: d.cfg.MCP.HeaderTimeout,
		IdleTimeout:       d.cfg.API.IdleTimeout,
		ConnContext:       withConnState,
		ErrorLog:          slog.NewLogLogger(d.log.Handler(), slog.LevelWarn),
	}
}

// mcpClaim claims a streamable HTTP request's connection for the worker
// its token names. A request without a valid token is left to the MCP
// handler to refuse, and its connection is closed after the answer: it
// stays no longer than one request.
func (d *Daemon) mcpClaim(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, token, _ := strings.Cut(r.Header.Get(api.HeaderAuthorization), " ")
		c, err := apiserver.TokenCaller(d.store)(r.Context(), strings.TrimSpace(token))
		if err != nil || !strings.EqualFold(scheme, "Bearer") {
			w.Header().Set("Connection", "close")
			next.ServeHTTP(w, r)
			return
		}
		if err := claimConn(w, r, c); err != nil {
			apiserver.WriteError(w, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}
