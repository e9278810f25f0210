package httpexec

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/policy/netguard"
)

// egressTransport sends every request of a call to the daemon's egress
// proxy instead of the API: the proxy puts the call's secrets in, checks
// the address with the network guard and dials. One connection a request
// keeps it simple; the proxy is on the loopback interface, or on a Unix
// socket ("unix:PATH") for an executor in a container, which then needs no
// network of its own: every request of the call, redirects included, goes
// this way.
type egressTransport struct {
	egress executors.Egress
}

func (t *egressTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	network, addr := "tcp", t.egress.Addr
	if path, ok := strings.CutPrefix(addr, executors.EgressUnixPrefix); ok {
		network, addr = "unix", path
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		closeBody(req)
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	out := req.Clone(ctx)
	out.Header.Set(executors.EgressTokenHeader, t.egress.Token)
	out.Close = true
	if err := out.WriteProxy(conn); err != nil {
		stop()
		conn.Close()
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		stop()
		conn.Close()
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	if e := resp.Header.Get(executors.EgressErrorHeader); e != "" {
		resp.Body.Close()
		stop()
		conn.Close()
		return nil, egressError(req, e)
	}
	resp.Body = &connBody{ReadCloser: resp.Body, conn: conn, stop: stop}
	return resp, nil
}

// egressError turns the proxy's own error into the error a direct request
// would have met: a guard refusal stays one.
func egressError(req *http.Request, e string) error {
	code, msg, _ := strings.Cut(e, ": ")
	if code == string(errdefs.PolicyDenied) {
		return &netguard.DeniedError{URL: netguard.RedactURL(req.URL.String()), Reason: msg}
	}
	return errors.New(e)
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// connBody closes the proxy connection with the response body.
type connBody struct {
	io.ReadCloser
	conn net.Conn
	stop func() bool
}

func (b *connBody) Close() error {
	err := b.ReadCloser.Close()
	b.stop()
	b.conn.Close()
	return err
}
