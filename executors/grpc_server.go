package executors

import (
	"context"

	"github.com/toolcage/toolcage/executors/proto"
)

// grpcServer adapts an Executor to the gRPC service. It only converts.
type grpcServer struct {
	proto.UnimplementedExecutorServer
	impl Executor
}

func (s *grpcServer) Execute(ctx context.Context, in *proto.ExecuteRequest) (*proto.ExecuteResponse, error) {
	res, err := s.impl.Execute(ctx, requestFromProto(in))
	return resultToProto(res, err), nil
}

var _ proto.ExecutorServer = (*grpcServer)(nil)
