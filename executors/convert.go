package executors

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors/proto"
	"github.com/toolcage/toolcage/principal"
)

func requestToProto(r *Request) *proto.ExecuteRequest {
	out := &proto.ExecuteRequest{
		CallId:      r.CallID,
		Tool:        r.Tool,
		Version:     int32(r.Version),
		Caller:      &proto.Caller{Id: r.Caller.ID, Type: r.Caller.Type, Worker: r.Caller.Worker},
		Kind:        string(r.Kind),
		Args:        r.Args,
		Permissions: r.Permissions,
		Limits: &proto.Limits{
			TimeoutNs:   int64(r.Limits.Timeout),
			MemoryBytes: r.Limits.MemoryBytes,
			OutputBytes: r.Limits.OutputBytes,
			Requests:    int32(r.Limits.Requests),
		},
	}
	if r.JS != nil {
		out.Js = &proto.JSCall{Code: r.JS.Code, AllowedDomains: r.JS.AllowedDomains, AllowPrivateHosts: r.JS.AllowPrivateHosts, Secrets: r.JS.Secrets}
		if st := r.JS.State; st != nil {
			out.Js.StateOn = true
			out.Js.State = make(map[string][]byte, len(st.Values))
			for k, v := range st.Values {
				out.Js.State[k] = v
			}
			out.Js.StateMaxKeys, out.Js.StateMaxKeyBytes, out.Js.StateMaxValueBytes = int32(st.MaxKeys), int32(st.MaxKeyBytes), int64(st.MaxValueBytes)
		}
	}
	if r.Shell != nil {
		out.Shell = &proto.ShellCall{Argv: r.Shell.Argv, Command: r.Shell.Command, Env: r.Shell.Env, Dir: r.Shell.Dir}
	}
	if f := r.FS; f != nil {
		out.Fs = &proto.FSCall{Op: f.Op, Root: f.Root, ReadOnly: f.ReadOnly, Path: f.Path, Content: f.Content,
			Find: f.Find, Replace: f.Replace, Pattern: f.Pattern, StartLine: f.StartLine, EndLine: f.EndLine,
			MaxReadBytes: f.MaxReadBytes, MaxWriteBytes: f.MaxWriteBytes, MaxMatches: int32(f.MaxMatches)}
	}
	if r.HTTP != nil {
		out.Http = &proto.HTTPCall{
			Method: r.HTTP.Method, Url: r.HTTP.URL, Headers: r.HTTP.Headers, Body: r.HTTP.Body,
			AllowedDomains: r.HTTP.AllowedDomains, AllowPrivateHosts: r.HTTP.AllowPrivateHosts,
			MaxResponseBytes: r.HTTP.MaxResponseBytes, TruncateBody: r.HTTP.TruncateBody,
		}
		if e := r.HTTP.Egress; e != nil {
			out.Http.EgressAddr, out.Http.EgressToken = e.Addr, e.Token
		}
	}
	return out
}

func requestFromProto(in *proto.ExecuteRequest) *Request {
	r := &Request{
		CallID:      in.GetCallId(),
		Tool:        in.GetTool(),
		Version:     int(in.GetVersion()),
		Kind:        Kind(in.GetKind()),
		Args:        in.GetArgs(),
		Permissions: in.GetPermissions(),
	}
	if c := in.GetCaller(); c != nil {
		r.Caller = principal.Caller{ID: c.GetId(), Type: c.GetType(), Worker: c.GetWorker()}
	}
	if l := in.GetLimits(); l != nil {
		r.Limits = Limits{
			Timeout:     time.Duration(l.GetTimeoutNs()),
			MemoryBytes: l.GetMemoryBytes(),
			OutputBytes: l.GetOutputBytes(),
			Requests:    int(l.GetRequests()),
		}
	}
	if js := in.GetJs(); js != nil {
		r.JS = &JSCall{Code: js.GetCode(), AllowedDomains: js.GetAllowedDomains(), AllowPrivateHosts: js.GetAllowPrivateHosts(), Secrets: js.GetSecrets()}
		if js.GetStateOn() {
			st := &JSState{Values: make(map[string]json.RawMessage, len(js.GetState())),
				MaxKeys: int(js.GetStateMaxKeys()), MaxKeyBytes: int(js.GetStateMaxKeyBytes()), MaxValueBytes: int(js.GetStateMaxValueBytes())}
			for k, v := range js.GetState() {
				st.Values[k] = v
			}
			r.JS.State = st
		}
	}
	if sh := in.GetShell(); sh != nil {
		r.Shell = &ShellCall{Argv: sh.GetArgv(), Command: sh.GetCommand(), Env: sh.GetEnv(), Dir: sh.GetDir()}
	}
	if f := in.GetFs(); f != nil {
		r.FS = &FSCall{Op: f.GetOp(), Root: f.GetRoot(), ReadOnly: f.GetReadOnly(), Path: f.GetPath(), Content: f.GetContent(),
			Find: f.GetFind(), Replace: f.GetReplace(), Pattern: f.GetPattern(), StartLine: f.GetStartLine(), EndLine: f.GetEndLine(),
			MaxReadBytes: f.GetMaxReadBytes(), MaxWriteBytes: f.GetMaxWriteBytes(), MaxMatches: int(f.GetMaxMatches())}
	}
	if h := in.GetHttp(); h != nil {
		r.HTTP = &HTTPCall{
			Method: h.GetMethod(), URL: h.GetUrl(), Headers: h.GetHeaders(), Body: h.GetBody(),
			AllowedDomains: h.GetAllowedDomains(), AllowPrivateHosts: h.GetAllowPrivateHosts(),
			MaxResponseBytes: h.GetMaxResponseBytes(), TruncateBody: h.GetTruncateBody(),
		}
		if h.GetEgressAddr() != "" {
			r.HTTP.Egress = &Egress{Addr: h.GetEgressAddr(), Token: h.GetEgressToken()}
		}
	}
	return r
}

func resultToProto(r *Result, err error) *proto.ExecuteResponse {
	out := &proto.ExecuteResponse{}
	if err != nil {
		out.Failure = errorToProto(err)
		return out
	}
	if r == nil {
		out.Failure = &proto.Error{Code: proto.ErrorCode_ERROR_CODE_INTERNAL, Message: "executor returned no result"}
		return out
	}
	out.Value = r.Value
	out.IsError = r.IsError
	out.Error = r.Error
	out.OutputBytes = r.OutputBytes
	out.Truncated = r.Truncated
	out.DurationNs = int64(r.Duration)
	for _, l := range r.Logs {
		out.Logs = append(out.Logs, &proto.LogLine{Level: l.Level, Message: l.Message})
	}
	for _, c := range r.StateChanges {
		out.StateChanges = append(out.StateChanges, &proto.StateChange{Key: c.Key, Value: c.Value, Delete: c.Value == nil})
	}
	return out
}

func resultFromProto(in *proto.ExecuteResponse) (*Result, error) {
	if f := in.GetFailure(); f != nil {
		return nil, errorFromProto(f)
	}
	r := &Result{
		Value:       in.GetValue(),
		IsError:     in.GetIsError(),
		Error:       in.GetError(),
		OutputBytes: in.GetOutputBytes(),
		Truncated:   in.GetTruncated(),
		Duration:    time.Duration(in.GetDurationNs()),
	}
	for _, l := range in.GetLogs() {
		r.Logs = append(r.Logs, LogLine{Level: l.GetLevel(), Message: l.GetMessage()})
	}
	for _, c := range in.GetStateChanges() {
		sc := StateChange{Key: c.GetKey()}
		if !c.GetDelete() {
			sc.Value = json.RawMessage(c.GetValue())
		}
		r.StateChanges = append(r.StateChanges, sc)
	}
	return r, nil
}

// codeToProto maps every stable code to its wire value; a test holds it to
// errdefs.Codes.
var codeToProto = map[errdefs.Code]proto.ErrorCode{
	errdefs.Timeout:           proto.ErrorCode_ERROR_CODE_TIMEOUT,
	errdefs.LimitExceeded:     proto.ErrorCode_ERROR_CODE_LIMIT_EXCEEDED,
	errdefs.ExecutorFailed:    proto.ErrorCode_ERROR_CODE_EXECUTOR_FAILED,
	errdefs.PolicyDenied:      proto.ErrorCode_ERROR_CODE_POLICY_DENIED,
	errdefs.InvalidArguments:  proto.ErrorCode_ERROR_CODE_INVALID_ARGUMENTS,
	errdefs.Internal:          proto.ErrorCode_ERROR_CODE_INTERNAL,
	errdefs.InvalidRequest:    proto.ErrorCode_ERROR_CODE_INVALID_REQUEST,
	errdefs.Unavailable:       proto.ErrorCode_ERROR_CODE_UNAVAILABLE,
	errdefs.ToolNotFound:      proto.ErrorCode_ERROR_CODE_TOOL_NOT_FOUND,
	errdefs.NotFound:          proto.ErrorCode_ERROR_CODE_NOT_FOUND,
	errdefs.InvalidDefinition: proto.ErrorCode_ERROR_CODE_INVALID_DEFINITION,
	errdefs.Conflict:          proto.ErrorCode_ERROR_CODE_CONFLICT,
	errdefs.Forbidden:         proto.ErrorCode_ERROR_CODE_FORBIDDEN,
	errdefs.ToolNotActive:     proto.ErrorCode_ERROR_CODE_TOOL_NOT_ACTIVE,
	errdefs.RateLimited:       proto.ErrorCode_ERROR_CODE_RATE_LIMITED,
	errdefs.ApprovalRequired:  proto.ErrorCode_ERROR_CODE_APPROVAL_REQUIRED,
	errdefs.ApprovalDenied:    proto.ErrorCode_ERROR_CODE_APPROVAL_DENIED,
	errdefs.Unauthorized:      proto.ErrorCode_ERROR_CODE_UNAUTHORIZED,
}

// codeFromProto is codeToProto inverted.
var codeFromProto = func() map[proto.ErrorCode]errdefs.Code {
	m := make(map[proto.ErrorCode]errdefs.Code, len(codeToProto))
	for c, p := range codeToProto {
		m[p] = c
	}
	return m
}()

// errorToProto carries err's code, op, limit and cause. An error that is no
// *errdefs.Error goes as internal with its whole text.
func errorToProto(err error) *proto.Error {
	var e *errdefs.Error
	if !errors.As(err, &e) {
		return &proto.Error{Code: proto.ErrorCode_ERROR_CODE_INTERNAL, Message: err.Error()}
	}
	out := &proto.Error{Code: proto.ErrorCode_ERROR_CODE_INTERNAL, Limit: e.Limit, Op: e.Op}
	if c, ok := codeToProto[e.Code]; ok {
		out.Code = c
	}
	if e.Err != nil {
		out.Message = e.Err.Error()
	}
	return out
}

// errorFromProto rebuilds the *errdefs.Error; a code this build does not know
// (a newer executor) reads as internal.
func errorFromProto(in *proto.Error) error {
	code, ok := codeFromProto[in.GetCode()]
	if !ok {
		code = errdefs.Internal
	}
	out := &errdefs.Error{Code: code, Limit: in.GetLimit(), Op: in.GetOp()}
	if msg := in.GetMessage(); msg != "" {
		out.Err = errors.New(msg)
	}
	return out
}
