package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/principal"
)

// bindingKey holds a ServeConn session's binding in its handlers' context.
type bindingKey struct{}

// binding is what a ServeConn session was opened with.
type binding struct {
	token   string
	session string
}

// callerExtra is the key of the caller in an HTTP request's TokenInfo.
const callerExtra = "toolcage/caller"

// ServeConn serves one MCP session over conn (newline-delimited JSON-RPC,
// as on stdio) as the agent caller, authenticated with token, until the
// peer closes it, ctx ends or the Server closes. The token is checked
// again for every call.
func (s *Server) ServeConn(ctx context.Context, conn io.ReadWriteCloser, token string, caller principal.Caller) error {
	if caller.Worker == "" || caller.TokenID == "" {
		conn.Close()
		return errdefs.Errorf(errdefs.Unauthorized, "an MCP session needs a worker token")
	}
	ws, err := s.serverFor(ctx, caller.Worker)
	if err != nil {
		conn.Close()
		return err
	}
	if !s.track(conn) {
		return errdefs.Errorf(errdefs.Unavailable, "the daemon is stopping")
	}
	defer s.untrack(conn)
	label := caller.Session
	if label == "" {
		label = "mcp-" + randomHex(4)
	}
	bctx := context.WithValue(ctx, bindingKey{}, &binding{token: token, session: label})
	ss, err := ws.srv.Connect(bctx, &sdk.IOTransport{Reader: conn, Writer: conn}, nil)
	if err != nil {
		conn.Close()
		return err
	}
	werr := make(chan error, 1)
	go func() { werr <- ss.Wait() }()
	select {
	case err = <-werr:
	case <-ctx.Done():
		ss.Close()
		err = <-werr
	}
	if closedNormally(err) {
		return nil
	}
	return err
}

// closedNormally reports whether a session's end is a close (by either
// side) rather than a failure.
func closedNormally(err error) bool {
	var we *jsonrpc.Error
	return err == nil || errors.Is(err, io.EOF) || errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, net.ErrClosed) ||
		errors.As(err, &we) && we.Code == codeServerClosing
}

// codeServerClosing is the SDK's JSON-RPC code for "server is closing",
// what a session ended by Close or by its peer waits with.
const codeServerClosing = -32004

// HTTPHandler serves streamable HTTP at /mcp/{worker}: every request must
// carry Authorization: Bearer with a live token of that worker (else 401,
// the same for a wrong, revoked or another worker's token). Sessions are
// kept by the SDK; one idle for sessionTimeout is dropped.
func (s *Server) HTTPHandler(sessionTimeout time.Duration) http.Handler {
	h := sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		ws, err := s.serverFor(r.Context(), r.PathValue("worker"))
		if err != nil {
			return nil
		}
		return ws.srv
	}, &sdk.StreamableHTTPOptions{
		Logger: s.log, SessionTimeout: sessionTimeout,
		// A client that hangs up ends its call, and so its approval wait
		// (the approval stays pending, as on the socket API).
		PropagateRequestCancellation: true,
	})
	verify := func(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
		c, err := s.cfg.Authenticate(ctx, token)
		if err != nil {
			if errdefs.CodeOf(err) == errdefs.Unauthorized {
				return nil, auth.ErrInvalidToken
			}
			return nil, err
		}
		if c.Worker != r.PathValue("worker") {
			return nil, auth.ErrInvalidToken // not this endpoint's token
		}
		// UserID pins a session to the token that opened it: the SDK
		// refuses the session's requests under any other.
		return &auth.TokenInfo{UserID: c.TokenID, Extra: map[string]any{callerExtra: c}}, nil
	}
	protected := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	mux := http.NewServeMux()
	mux.Handle("/mcp/{worker}", loopbackOrigin(protected))
	return mux
}

// loopbackOrigin refuses (403) a request whose Origin is not a loopback
// one: a browser sends the Origin of the page that made the request, and a
// page elsewhere (a DNS-rebound name included: its Origin keeps the name)
// has no business here, whatever it holds. A client that is not a browser
// sends none, and passes.
func loopbackOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Values("Origin"); len(origin) > 0 && (len(origin) > 1 || !isLoopbackOrigin(origin[0])) {
			http.Error(w, "forbidden: Origin "+strings.Join(origin, ", ")+" is not a loopback origin; the MCP endpoint serves local clients only", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isLoopbackOrigin reports whether origin is http(s)://HOST[:PORT] with
// HOST localhost or a loopback IP.
func isLoopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// sessionLabel bounds an SDK session id to the audit's session label form.
func sessionLabel(id string) string {
	id = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, id)
	if len(id) > 16 {
		id = id[:16]
	}
	return "mcp-" + id
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
