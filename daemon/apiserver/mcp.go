package apiserver

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
)

// tokenCaller is the agent a worker token stands for: type llm, id
// worker:NAME, its worker and token id; unauthorized when the token is
// bad, unknown or revoked.
func (d *Server) tokenCaller(ctx context.Context, token string) (principal.Caller, error) {
	return TokenCaller(d.store)(ctx, token)
}

// TokenCaller is tokenCaller over st, for the MCP server's own
// authentication.
func TokenCaller(st *store.Store) func(ctx context.Context, token string) (principal.Caller, error) {
	return func(ctx context.Context, token string) (principal.Caller, error) {
		name, tokenID, err := st.Authenticate(ctx, token)
		if errors.Is(err, store.ErrInvalidToken) {
			return principal.Caller{}, errdefs.Errorf(errdefs.Unauthorized, "the worker token is not valid (unknown, revoked or malformed)")
		}
		if err != nil {
			return principal.Caller{}, err
		}
		return principal.Caller{Type: principal.TypeLLM, ID: "worker:" + name, Worker: name, TokenID: tokenID}, nil
	}
}

// mcpSession is GET /v1/mcp: it hands the connection to an MCP session of
// the token's worker.
func (d *Server) mcpSession(w http.ResponseWriter, r *http.Request) error {
	c, err := callerOf(r)
	if err != nil {
		return err
	}
	if c.TokenID == "" {
		return errdefs.Errorf(errdefs.Unauthorized, "an MCP session is a worker's agent: send its token as %s: Bearer <token>", api.HeaderAuthorization)
	}
	if !strings.EqualFold(r.Header.Get("Upgrade"), api.MCPUpgrade) {
		return badRequest("GET /v1/mcp switches protocols: send Connection: Upgrade and Upgrade: %s", api.MCPUpgrade)
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		return errdefs.Errorf(errdefs.Internal, "the connection cannot switch protocols")
	}
	_, token, _ := strings.Cut(r.Header.Get(api.HeaderAuthorization), " ")
	conn, rw, err := hj.Hijack()
	if err != nil {
		return err
	}
	// The HTTP server's deadlines no longer apply: the session lasts as
	// long as its client.
	_ = conn.SetDeadline(time.Time{})
	_, err = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + api.MCPUpgrade + "\r\n\r\n")
	if err == nil {
		err = rw.Flush()
	}
	if err != nil {
		conn.Close()
		return nil
	}
	d.log.Info("mcp session opened", "worker", c.Worker, "token_id", c.TokenID, "transport", "socket")
	err = d.mcp.ServeConn(r.Context(), &upgradedConn{Conn: conn, r: rw.Reader}, strings.TrimSpace(token), c)
	if err != nil {
		d.log.Warn("mcp session ended", "worker", c.Worker, "err", err)
	} else {
		d.log.Info("mcp session closed", "worker", c.Worker, "token_id", c.TokenID)
	}
	return nil
}

// upgradedConn reads what the HTTP server had already buffered first.
type upgradedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *upgradedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
