package executors

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/toolcage/toolcage/executors/proto"
)

// PluginName is the name the executor is dispensed under.
const PluginName = "executor"

// Handshake is shared by the daemon and the executor binary. A mismatch
// means the binaries are from different builds and is refused at start.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "TOOLCAGE_EXECUTOR_PLUGIN",
	MagicCookieValue: "c6f1d9a2-toolcage-executor",
}

// PluginMap returns the plugin set both sides use. impl is nil on the host.
func PluginMap(impl Executor) plugin.PluginSet {
	return plugin.PluginSet{PluginName: &Plugin{Impl: impl}}
}

// HostPluginMap is the host's plugin set. serveHost opens each executor's
// Host stream and answers its calls' callbacks (host.go).
func HostPluginMap(serveHost bool) plugin.PluginSet {
	return plugin.PluginSet{PluginName: &Plugin{ServeHost: serveHost}}
}

// Plugin is the go-plugin glue for an Executor over gRPC.
type Plugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl Executor
	// ServeHost (host side) answers the executor's callbacks over its
	// Host stream.
	ServeHost bool
}

// GRPCServer registers the executor's gRPC service.
func (p *Plugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	proto.RegisterExecutorServer(s, newGRPCServer(p.Impl))
	return nil
}

// GRPCClient returns an Executor that calls over conn; with ServeHost it
// also opens the executor's Host stream and answers its callbacks until
// the executor is gone. The stream rides the executor's own connection:
// go-plugin's broker would open another socket, which a sandbox cannot
// reach (its socket dir is unbound after the handshake), or multiplex the
// connection, whose first accepted connection the sandbox's listener
// check would take.
func (p *Plugin) GRPCClient(ctx context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	c := &grpcClient{client: proto.NewExecutorClient(conn), doneCtx: ctx}
	if !p.ServeHost {
		return c, nil
	}
	stream, err := c.client.Host(ctx)
	if err != nil {
		return nil, err
	}
	c.host = newHostServer(stream)
	go c.host.serve()
	return c, nil
}

// MaxMessageBytes bounds one gRPC message between daemon and executor. A
// result at the output cap can grow several times when JSON-escaped, so this
// sits well above any cap a tool may set.
const MaxMessageBytes = 64 << 20

// GRPCDialOptions are the host's dial options for an executor connection.
func GRPCDialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageBytes), grpc.MaxCallSendMsgSize(MaxMessageBytes))}
}

// Serve runs impl as an executor plugin until the host goes away. It is the
// whole main of cmd/toolcage-executor once the kind is chosen.
func Serve(impl Executor) {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         PluginMap(impl),
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			opts = append(opts, grpc.MaxRecvMsgSize(MaxMessageBytes), grpc.MaxSendMsgSize(MaxMessageBytes))
			return grpc.NewServer(opts...)
		},
	})
}

// Interface guards.
var _ plugin.GRPCPlugin = (*Plugin)(nil)
