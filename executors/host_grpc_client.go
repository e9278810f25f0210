package executors

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors/proto"
)

// hostStream is the executor's end of the Host stream: it sends asks and
// hands each reply to the ask of its id. The daemon opens the stream once
// per executor; a call's callbacks wait for it (ready) if they come first.
type hostStream struct {
	mu      sync.Mutex
	stream  proto.Executor_HostServer
	ready   chan struct{} // closed once a stream is attached
	done    chan struct{} // closed when the attached stream ends
	nextID  uint64
	waiting map[uint64]chan *proto.HostReply
	sendMu  sync.Mutex
}

func newHostStream() *hostStream {
	return &hostStream{ready: make(chan struct{}), waiting: map[uint64]chan *proto.HostReply{}}
}

// attach serves stream until it ends: replies go to their asks.
func (h *hostStream) attach(stream proto.Executor_HostServer) error {
	h.mu.Lock()
	if h.stream != nil {
		h.mu.Unlock()
		return errdefs.Errorf(errdefs.Conflict, "the host stream is open already")
	}
	h.stream, h.done = stream, make(chan struct{})
	done := h.done
	close(h.ready)
	h.mu.Unlock()
	defer close(done)
	for {
		reply, err := stream.Recv()
		if err != nil {
			return nil // the daemon closed it, or is gone
		}
		h.mu.Lock()
		ch := h.waiting[reply.GetId()]
		delete(h.waiting, reply.GetId())
		h.mu.Unlock()
		if ch != nil {
			ch <- reply
		}
	}
}

// ask sends a and waits for its reply, for as long as ctx lasts.
func (h *hostStream) ask(ctx context.Context, a *proto.HostAsk) (*proto.HostReply, error) {
	select {
	case <-h.ready:
	case <-ctx.Done():
		return nil, hostUnavailable(ctx.Err())
	}
	h.mu.Lock()
	h.nextID++
	a.Id = h.nextID
	ch := make(chan *proto.HostReply, 1)
	h.waiting[a.Id] = ch
	stream, done := h.stream, h.done
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.waiting, a.Id)
		h.mu.Unlock()
	}()
	h.sendMu.Lock()
	err := stream.Send(a)
	h.sendMu.Unlock()
	if err != nil {
		return nil, hostUnavailable(err)
	}
	select {
	case r := <-ch:
		return r, nil
	case <-done:
		return nil, hostUnavailable(errdefs.Errorf(errdefs.Unavailable, "the daemon closed the host stream"))
	case <-ctx.Done():
		return nil, hostUnavailable(ctx.Err())
	}
}

func hostUnavailable(err error) error {
	return &errdefs.Error{Code: errdefs.Unavailable, Op: "host", Err: err}
}

// hostClient is Host as an executor sees it: one running call's
// callbacks, sent over the Host stream.
type hostClient struct {
	h      *hostStream
	callID string
}

func (c *hostClient) CallTool(ctx context.Context, name string, args json.RawMessage) (*HostCallResult, error) {
	r, err := c.h.ask(ctx, &proto.HostAsk{CallId: c.callID, Ask: &proto.HostAsk_CallTool{CallTool: &proto.CallToolRequest{Name: name, Args: args}}})
	if err != nil {
		return nil, err
	}
	out := r.GetCallTool()
	if out == nil {
		return nil, errdefs.Errorf(errdefs.Internal, "host: the reply to a callTool is not one")
	}
	if f := out.GetFailure(); f != nil {
		return nil, errorFromProto(f)
	}
	return &HostCallResult{CallID: out.GetCallId(), Value: out.GetValue(), IsError: out.GetIsError(), Error: out.GetError()}, nil
}

func (c *hostClient) ListTools(ctx context.Context) ([]HostTool, error) {
	r, err := c.h.ask(ctx, &proto.HostAsk{CallId: c.callID, Ask: &proto.HostAsk_ListTools{ListTools: &proto.ListToolsRequest{}}})
	if err != nil {
		return nil, err
	}
	out := r.GetListTools()
	if out == nil {
		return nil, errdefs.Errorf(errdefs.Internal, "host: the reply to a listTools is not one")
	}
	if f := out.GetFailure(); f != nil {
		return nil, errorFromProto(f)
	}
	tools := make([]HostTool, len(out.GetTools()))
	for i, t := range out.GetTools() {
		tools[i] = HostTool{Name: t.GetName(), Description: t.GetDescription(), Parameters: t.GetParameters()}
	}
	return tools, nil
}

var _ Host = (*hostClient)(nil)
