package apiserver

import (
	"context"
	"net"
)

type ctxKey int

const peerKey ctxKey = iota

// peer is what the kernel says about the process on the other end.
type peer struct {
	uid uint32
	err error
}

// ConnContext puts what the kernel says of a socket connection's peer in
// its context (http.Server.ConnContext): the peer check and the
// person's default id read it.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	uid, err := peerUID(c)
	return context.WithValue(ctx, peerKey, peer{uid: uid, err: err})
}
