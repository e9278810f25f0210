package executors

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors/proto"
)

// hostServer is the daemon's side of Host for one executor: it reads the
// executor's asks from the Host stream and answers each for the call
// running on the executor, refusing any other (between calls, or naming
// another call id). It only converts and calls the running call's Host.
type hostServer struct {
	mu  sync.Mutex
	run *hostRun // nil between calls

	sendMu sync.Mutex
	stream proto.Executor_HostClient
	// inflight bounds the asks answered at once: the JS executor sends one
	// at a time, so more only come from an executor that misbehaves.
	inflight chan struct{}
}

// maxHostAsks is how many asks of one executor are answered at once.
const maxHostAsks = 4

func newHostServer(stream proto.Executor_HostClient) *hostServer {
	return &hostServer{stream: stream, inflight: make(chan struct{}, maxHostAsks)}
}

// hostRun is the call running on the executor.
type hostRun struct {
	callID string
	host   Host
	// ctx is the running call's: a callback ends when the call does.
	ctx context.Context
}

// begin makes the call the one callbacks are answered for, until end.
func (s *hostServer) begin(ctx context.Context, callID string, h Host) (end func()) {
	run := &hostRun{callID: callID, host: h, ctx: ctx}
	s.mu.Lock()
	s.run = run
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		if s.run == run {
			s.run = nil
		}
		s.mu.Unlock()
	}
}

// current is the running call, if callID names it.
func (s *hostServer) current(callID string) (*hostRun, error) {
	s.mu.Lock()
	run := s.run
	s.mu.Unlock()
	if run == nil || callID == "" || run.callID != callID {
		return nil, errdefs.Errorf(errdefs.Forbidden, "no call %q is running on this executor", callID)
	}
	return run, nil
}

// serve answers asks until the stream ends (the executor is gone). Each
// ask is answered on its own goroutine: a nested call may take long.
func (s *hostServer) serve() {
	for {
		ask, err := s.stream.Recv()
		if err != nil {
			return
		}
		select {
		case s.inflight <- struct{}{}:
			go func() {
				defer func() { <-s.inflight }()
				s.answer(ask)
			}()
		default:
			s.refuse(ask, errdefs.Errorf(errdefs.RateLimited, "more than %d callbacks of one executor at once", maxHostAsks))
		}
	}
}

// refuse answers ask with err.
func (s *hostServer) refuse(ask *proto.HostAsk, err error) {
	reply := &proto.HostReply{Id: ask.GetId()}
	if _, ok := ask.GetAsk().(*proto.HostAsk_ListTools); ok {
		reply.Reply = &proto.HostReply_ListTools{ListTools: &proto.ListToolsResponse{Failure: errorToProto(err)}}
	} else {
		reply.Reply = &proto.HostReply_CallTool{CallTool: &proto.CallToolResponse{Failure: errorToProto(err)}}
	}
	s.send(reply)
}

func (s *hostServer) send(reply *proto.HostReply) {
	// A reply that cannot be sent has no one left to read it: the
	// executor is gone, and its call with it.
	s.sendMu.Lock()
	_ = s.stream.Send(reply)
	s.sendMu.Unlock()
}

func (s *hostServer) answer(ask *proto.HostAsk) {
	reply := &proto.HostReply{Id: ask.GetId()}
	switch a := ask.GetAsk().(type) {
	case *proto.HostAsk_CallTool:
		reply.Reply = &proto.HostReply_CallTool{CallTool: s.callTool(ask.GetCallId(), a.CallTool)}
	case *proto.HostAsk_ListTools:
		reply.Reply = &proto.HostReply_ListTools{ListTools: s.listTools(ask.GetCallId())}
	default:
		reply.Reply = &proto.HostReply_CallTool{CallTool: &proto.CallToolResponse{
			Failure: errorToProto(errdefs.Errorf(errdefs.InvalidRequest, "unknown host ask %T", a))}}
	}
	s.send(reply)
}

// callCtx is the context of a callback: the running call's.
func (run *hostRun) callCtx() context.Context { return run.ctx }

func (s *hostServer) callTool(callID string, in *proto.CallToolRequest) *proto.CallToolResponse {
	run, err := s.current(callID)
	if err != nil {
		return &proto.CallToolResponse{Failure: errorToProto(err)}
	}
	res, err := run.host.CallTool(run.callCtx(), in.GetName(), json.RawMessage(in.GetArgs()))
	if err != nil {
		return &proto.CallToolResponse{Failure: errorToProto(err)}
	}
	return &proto.CallToolResponse{CallId: res.CallID, Value: res.Value, IsError: res.IsError, Error: res.Error}
}

func (s *hostServer) listTools(callID string) *proto.ListToolsResponse {
	run, err := s.current(callID)
	if err != nil {
		return &proto.ListToolsResponse{Failure: errorToProto(err)}
	}
	tools, err := run.host.ListTools(run.callCtx())
	if err != nil {
		return &proto.ListToolsResponse{Failure: errorToProto(err)}
	}
	out := &proto.ListToolsResponse{Tools: make([]*proto.HostTool, len(tools))}
	for i, t := range tools {
		out.Tools[i] = &proto.HostTool{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
	}
	return out
}
