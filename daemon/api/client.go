package api

import (
	"bufio"
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
	req, err := c.newRequest(ctx, method, path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
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
		return errorOf(resp.StatusCode, data)
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

// newRequest builds a request to the daemon carrying the client's identity.
func (c *Client) newRequest(ctx context.Context, method, path string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, "http://toolcage"+path, body)
	if err != nil {
		return nil, err
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
	return req, nil
}

// errorOf is the *Error of an error answer.
func errorOf(status int, data []byte) error {
	var eb ErrorBody
	if json.Unmarshal(data, &eb) != nil || eb.Error.Code == "" {
		return &Error{Status: status, ErrorDetail: ErrorDetail{Code: errdefs.Internal, Message: strings.TrimSpace(string(data))}}
	}
	return &Error{Status: status, ErrorDetail: eb.Error}
}

// Open sends a GET and returns the answer's body to read as it arrives
// (a JSON Lines export, an event stream); the caller closes it. An error
// answer becomes *Error.
func (c *Client) Open(ctx context.Context, path string) (io.ReadCloser, error) {
	req, err := c.newRequest(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w at %s: %v", ErrDaemonUnreachable, c.socket, err)
	}
	if resp.StatusCode >= 400 {
		defer resp.Body.Close()
		data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if err != nil {
			return nil, fmt.Errorf("reading response: %w", err)
		}
		return nil, errorOf(resp.StatusCode, data)
	}
	return resp.Body, nil
}

// Event is one server-sent event.
type Event struct {
	Name string // "message" when the stream names none
	ID   string
	Data []byte
}

// maxEventLine bounds one line of an event stream.
const maxEventLine = 8 << 20

// ReadEvents reads a server-sent event stream from r and calls fn with
// each event, until r ends (nil), fn returns an error (that error) or r
// fails. Comment lines (keep-alives) are skipped.
func ReadEvents(r io.Reader, fn func(Event) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventLine)
	var ev Event
	var data [][]byte
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if data != nil {
				ev.Data = bytes.Join(data, []byte("\n"))
				if ev.Name == "" {
					ev.Name = "message"
				}
				if err := fn(ev); err != nil {
					return err
				}
			}
			ev, data = Event{}, nil
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "": // a comment
		case "event":
			ev.Name = string(value)
		case "id":
			ev.ID = string(value)
		case "data":
			data = append(data, bytes.Clone(value))
		}
	}
	return sc.Err()
}
