package executors

import (
	"context"

	"github.com/toolcage/toolcage/executors/proto"
)

// grpcServer adapts an Executor to the gRPC service. It only converts,
// and gives a call that may call back a Host that asks the daemon over
// the Host stream.
type grpcServer struct {
	proto.UnimplementedExecutorServer
	impl Executor
	host *hostStream
}

func newGRPCServer(impl Executor) *grpcServer {
	return &grpcServer{impl: impl, host: newHostStream()}
}

func (s *grpcServer) Execute(ctx context.Context, in *proto.ExecuteRequest) (*proto.ExecuteResponse, error) {
	req := requestFromProto(in)
	if in.GetHost() {
		req.Host = &hostClient{h: s.host, callID: req.CallID}
	}
	res, err := s.impl.Execute(ctx, req)
	return resultToProto(res, err), nil
}

// Host is the daemon's Host stream, open for the executor's life.
func (s *grpcServer) Host(stream proto.Executor_HostServer) error {
	return s.host.attach(stream)
}

var _ proto.ExecutorServer = (*grpcServer)(nil)
