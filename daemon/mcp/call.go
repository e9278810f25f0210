package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcage/toolcage/daemon/dispatch"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/principal"
)

// handler is the tools/call handler of one worker's tool: the call goes
// to the dispatcher as the session's agent, and whatever happens comes
// back as a tool result (a protocol error only for what is no call at
// all).
func (s *Server) handler(worker, tool string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		caller, err := s.callerOf(ctx, req)
		if err == nil && caller.Worker != worker {
			err = errdefs.Errorf(errdefs.Unauthorized, "the session is worker %q's, not %q's", caller.Worker, worker)
		}
		if err != nil {
			return errorResult(err), nil
		}
		var stopProgress func()
		cr := dispatch.CallRequest{Tool: tool, Arguments: req.Params.Arguments, Caller: caller}
		if token := req.Params.GetProgressToken(); token != nil {
			cr.OnApprovalWait = func(id string) { stopProgress = s.progress(ctx, req.Session, token, tool, id) }
		}
		out, err := s.cfg.Dispatcher.Call(ctx, cr)
		if stopProgress != nil {
			stopProgress()
		}
		if err != nil {
			return errorResult(err), nil
		}
		return outcomeResult(out), nil
	}
}

// progress sends progress notifications for a call parked as approval id
// until the returned function is called: one at once, then one each
// ProgressInterval, the progress counting seconds waited.
func (s *Server) progress(ctx context.Context, ss *sdk.ServerSession, token any, tool, id string) func() {
	msg := fmt.Sprintf("tool %s waits for a person's approval %s (toolcage approvals allow %s, or deny %s)", tool, id, id, id)
	started := time.Now()
	send := func() {
		p := &sdk.ProgressNotificationParams{ProgressToken: token, Message: msg, Progress: time.Since(started).Seconds()}
		if err := ss.NotifyProgress(ctx, p); err != nil && ctx.Err() == nil {
			s.log.Debug("mcp: progress notification", "err", err)
		}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		send()
		t := time.NewTicker(s.cfg.ProgressInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				send()
			}
		}
	}()
	return func() {
		close(done)
		<-finished // no progress after the result
	}
}

// ErrorInfo is the structured content of a refused or failed call.
type ErrorInfo struct {
	Code       errdefs.Code `json:"code"`
	Message    string       `json:"message"`
	CallID     string       `json:"call_id,omitempty"`
	ApprovalID string       `json:"approval_id,omitempty"`
	Limit      string       `json:"limit,omitempty"`
}

// errorResult is a call that did not run, or failed, as a tool result:
// isError, the code and message as text ("code: message") and as
// structured content {"error": {...}}.
func errorResult(err error) *sdk.CallToolResult {
	info := ErrorInfo{Code: errdefs.CodeOf(err), Message: err.Error(), Limit: errdefs.LimitOf(err)}
	var ce *dispatch.CallError
	if errors.As(err, &ce) {
		info.CallID = ce.CallID
	}
	var ae *dispatch.ApprovalError
	if errors.As(err, &ae) {
		info.ApprovalID = ae.ID
	}
	var ee *errdefs.Error
	if info.Code == errdefs.Internal && !errors.As(err, &ee) {
		info.Message = "internal error" // the detail is in the daemon's log
	}
	return &sdk.CallToolResult{
		IsError:           true,
		Content:           []sdk.Content{&sdk.TextContent{Text: string(info.Code) + ": " + info.Message}},
		StructuredContent: map[string]any{"error": info},
	}
}

// CallInfo is the structured content of a call that ran.
type CallInfo struct {
	// Result is the tool's JSON value.
	Result    json.RawMessage `json:"result"`
	CallID    string          `json:"call_id"`
	Version   int             `json:"version"`
	Truncated bool            `json:"truncated,omitempty"`
	// Logs are the lines the tool logged (console.log, stderr).
	Logs       []LogLine  `json:"logs,omitempty"`
	DurationMS float64    `json:"duration_ms"`
	Error      *ErrorInfo `json:"error,omitempty"`
}

// LogLine is one line a tool logged.
type LogLine struct {
	Level   string `json:"level"`
	Message string `json:"message"`
}

// ToolErrorCode is the code of a call that ran and whose tool reported
// an error (a thrown exception, a non-zero exit, an HTTP error status).
const ToolErrorCode errdefs.Code = "tool_error"

// outcomeResult is a call that ran: structured content holds the value
// and the call's facts; the text is the value (a string as is, anything
// else as JSON). A tool that reported an error is isError, with its
// message.
func outcomeResult(o *dispatch.Outcome) *sdk.CallToolResult {
	info := CallInfo{Result: o.Result, CallID: o.CallID, Version: o.Version, Truncated: o.Truncated,
		DurationMS: float64(o.Duration) / float64(time.Millisecond)}
	for _, l := range o.Logs {
		info.Logs = append(info.Logs, LogLine{Level: l.Level, Message: l.Message})
	}
	text := renderValue(o.Result)
	if o.IsError {
		info.Error = &ErrorInfo{Code: ToolErrorCode, Message: o.Error, CallID: o.CallID}
		text = string(ToolErrorCode) + ": " + o.Error
		if r := renderValue(o.Result); r != "null" && r != "" {
			text += "\n" + r
		}
	}
	if o.Truncated {
		text += "\n[output truncated at the tool's limit]"
	}
	return &sdk.CallToolResult{
		IsError:           o.IsError,
		Content:           []sdk.Content{&sdk.TextContent{Text: text}},
		StructuredContent: info,
	}
}

// renderValue is a JSON value as text: a string unquoted, anything else
// as compact JSON.
func renderValue(v json.RawMessage) string {
	var s string
	if t := bytes.TrimSpace(v); len(t) > 0 && t[0] == '"' && json.Unmarshal(t, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return string(v)
	}
	return b.String()
}

// callerOf is the agent a request comes from, checked again now: over a
// connection (ServeConn) its token is re-authenticated for every call, so
// a revoked token stops the session's calls at once; over streamable HTTP
// the request's own bearer token was checked by HTTPHandler.
func (s *Server) callerOf(ctx context.Context, req *sdk.CallToolRequest) (principal.Caller, error) {
	if b, ok := ctx.Value(bindingKey{}).(*binding); ok {
		c, err := s.cfg.Authenticate(ctx, b.token)
		if err != nil {
			return c, err
		}
		c.Session = b.session
		return c, nil
	}
	if ti := req.Extra.TokenInfo; ti != nil {
		if c, ok := ti.Extra[callerExtra].(principal.Caller); ok {
			if id := req.Session.ID(); id != "" {
				c.Session = sessionLabel(id)
			}
			return c, nil
		}
	}
	return principal.Caller{}, errdefs.Errorf(errdefs.Unauthorized, "the MCP session carries no worker token")
}
