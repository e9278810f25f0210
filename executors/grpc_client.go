package executors

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors/proto"
)

// grpcClient is the host's view of an executor process.
type grpcClient struct {
	client proto.ExecutorClient
	// doneCtx ends when the plugin process is gone.
	doneCtx context.Context
	// host answers the executor's callbacks; nil: this executor gets
	// none.
	host *hostServer
}

func (c *grpcClient) Execute(ctx context.Context, req *Request) (*Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(c.doneCtx, cancel)
	defer stop()

	pr := requestToProto(req)
	if req.Host != nil && c.host != nil {
		end := c.host.begin(ctx, req.CallID, req.Host)
		defer end()
		pr.Host = true
	}
	out, err := c.client.Execute(ctx, pr)
	if err != nil {
		return nil, c.wireError(ctx, err)
	}
	return resultFromProto(out)
}

// wireError turns a transport failure into a coded error: the caller's own
// deadline is a timeout, anything else means the executor is unusable.
func (c *grpcClient) wireError(ctx context.Context, err error) error {
	if c.doneCtx.Err() != nil {
		return ErrPluginShutdown
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded {
		return &errdefs.Error{Code: errdefs.Timeout, Limit: errdefs.LimitTimeout, Op: "execute", Err: ctx.Err()}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.Canceled:
		return &errdefs.Error{Code: errdefs.ExecutorFailed, Op: "execute", Err: errors.New("executor process exited")}
	}
	return &errdefs.Error{Code: errdefs.ExecutorFailed, Op: "execute", Err: err}
}

var _ Executor = (*grpcClient)(nil)
