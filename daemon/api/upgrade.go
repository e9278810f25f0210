package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/toolcage/toolcage/errdefs"
)

// MCPConn opens an MCP session on the daemon (GET /v1/mcp, switching the
// connection to MCPUpgrade) and returns the connection: newline-delimited
// JSON-RPC both ways, as on an MCP server's stdio. The client's Token must
// be set: the session is that worker's agent.
func (c *Client) MCPConn(ctx context.Context) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", c.socket)
	if err != nil {
		return nil, fmt.Errorf("%w at %s: %v", ErrDaemonUnreachable, c.socket, err)
	}
	// The handshake is bounded by ctx; the session after it is not.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://toolcage/v1/mcp", nil)
	if err != nil {
		conn.Close()
		return nil, err
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", MCPUpgrade)
	if c.Token != "" {
		req.Header.Set(HeaderAuthorization, "Bearer "+c.Token)
	}
	if c.Worker != "" {
		req.Header.Set(HeaderWorker, c.Worker)
	}
	if c.Session != "" {
		req.Header.Set(HeaderSession, c.Session)
	}
	if err := req.Write(conn); err != nil {
		conn.Close()
		return nil, fmt.Errorf("%w at %s: %v", ErrDaemonUnreachable, c.socket, err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("%w at %s: %v", ErrDaemonUnreachable, c.socket, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols || !strings.EqualFold(resp.Header.Get("Upgrade"), MCPUpgrade) {
		defer conn.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		var eb ErrorBody
		if json.Unmarshal(data, &eb) != nil || eb.Error.Code == "" {
			return nil, &Error{Status: resp.StatusCode, ErrorDetail: ErrorDetail{Code: errdefs.Internal,
				Message: fmt.Sprintf("the daemon did not switch to %s: %s %s", MCPUpgrade, resp.Status, strings.TrimSpace(string(data)))}}
		}
		return nil, &Error{Status: resp.StatusCode, ErrorDetail: eb.Error}
	}
	if !stop() {
		conn.Close()
		return nil, ctx.Err()
	}
	return &bufferedConn{Conn: conn, r: br}, nil
}

// bufferedConn reads what the handshake's reader already holds first.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// CloseWrite half-closes the connection: the daemon reads end of input.
func (c *bufferedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}
