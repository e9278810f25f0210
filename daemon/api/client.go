package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/toolcage/toolcage/errdefs"
)

// Client talks to the daemon over its Unix socket.
type Client struct {
	hc         *http.Client
	socket     string
	CallerType string
	CallerID   string
	Worker     string
	// Profile names a tool profile the caller asks to be held to, on top
	// of the ones the daemon's config maps it to.
	Profile string
	// Token, when set, is a worker token sent as Authorization: Bearer:
	// the client then acts as that worker's agent.
	Token string
	// Session labels an agent's session (Toolcage-Session).
	Session string
	// ApprovalWait, when set, is sent as Toolcage-Approval-Wait ("0": a
	// call needing approval returns at once).
	ApprovalWait string
}

// NewClient returns a client for the daemon listening on socket.
func NewClient(socket string) *Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
		MaxIdleConnsPerHost: 64,
		DisableCompression:  true,
	}
	return &Client{hc: &http.Client{Transport: tr}, socket: socket}
}

// Error is an error response from the daemon.
type Error struct {
	Status int
	ErrorDetail
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// ErrDaemonUnreachable wraps failures to reach the daemon at all.
var ErrDaemonUnreachable = errors.New("cannot reach the toolcage daemon")

// Do sends a request with an optional JSON body and decodes a JSON answer
// into out (when out is not nil). Error responses become *Error.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		switch v := in.(type) {
		case []byte:
			body = bytes.NewReader(v)
		case json.RawMessage:
			body = bytes.NewReader(v)
		default:
			b, err := json.Marshal(in)
			if err != nil {
				return err
			}
			body = bytes.NewReader(b)
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://toolcage"+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.CallerType != "" {
		req.Header.Set(HeaderCallerType, c.CallerType)
	}
	if c.CallerID != "" {
		req.Header.Set(HeaderCallerID, c.CallerID)
	}
	if c.Worker != "" {
		req.Header.Set(HeaderWorker, c.Worker)
	}
	if c.ApprovalWait != "" {
		req.Header.Set(HeaderApprovalWait, c.ApprovalWait)
	}
	if c.Profile != "" {
		req.Header.Set(HeaderProfile, c.Profile)
	}
	if c.Token != "" {
		req.Header.Set(HeaderAuthorization, "Bearer "+c.Token)
	}
	if c.Session != "" {
		req.Header.Set(HeaderSession, c.Session)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%w at %s: %v", ErrDaemonUnreachable, c.socket, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("reading response: %w", err)
	}
	if resp.StatusCode >= 400 {
		var eb ErrorBody
		if json.Unmarshal(data, &eb) != nil || eb.Error.Code == "" {
			return &Error{Status: resp.StatusCode, ErrorDetail: ErrorDetail{Code: errdefs.Internal, Message: strings.TrimSpace(string(data))}}
		}
		return &Error{Status: resp.StatusCode, ErrorDetail: eb.Error}
	}
	if out == nil || len(data) == 0 {
		return nil
	}
	if raw, ok := out.(*json.RawMessage); ok {
		*raw = append((*raw)[:0], data...)
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decoding response: %w", err)
	}
	return nil
}

// PathEscape escapes a tool name for a URL path.
func PathEscape(s string) string { return url.PathEscape(s) }
