package daemon

import (
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// bodyDeadline bounds how long a client may take to send a request body, so
// a client trickling its body cannot hold a connection for long.
//
// http.Server's ReadTimeout would bound it too, but its deadline stays on the
// connection while the handler runs, and the server's background read then
// cancels the request's context when it passes: a call waiting for a
// person's approval would end after ReadTimeout. So the deadline is set per
// request that has a body and lifted as soon as the body has been read; what
// the handler leaves unread the server discards under the same deadline.
func bodyDeadline(next http.Handler, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
			rc := http.NewResponseController(w)
			if err := rc.SetReadDeadline(time.Now().Add(timeout)); err == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the connection's read deadline once the body ends.
type deadlineBody struct {
	io.ReadCloser
	rc     *http.ResponseController
	lifted bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.lifted {
		b.lifted = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// limitListener caps the connections open at once: Accept waits for one to
// close. golang.org/x/net/netutil.LimitListener does the same, but its
// wrapper hides the connection's SyscallConn, which the peer-credential
// check needs; this one keeps it.
func limitListener(ln net.Listener, n int) net.Listener {
	return &limitedListener{Listener: ln, sem: make(chan struct{}, n), done: make(chan struct{})}
}

type limitedListener struct {
	net.Listener
	sem       chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func (l *limitedListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	release := func() { <-l.sem }
	if uc, ok := c.(*net.UnixConn); ok {
		return &limitedUnixConn{UnixConn: uc, release: release}, nil
	}
	return &limitedConn{Conn: c, release: release}, nil
}

func (l *limitedListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitedUnixConn gives its slot back when closed; embedding the
// *net.UnixConn keeps SyscallConn for SO_PEERCRED.
type limitedUnixConn struct {
	*net.UnixConn
	once    sync.Once
	release func()
}

func (c *limitedUnixConn) Close() error {
	err := c.UnixConn.Close()
	c.once.Do(c.release)
	return err
}

// limitedConn is the same for any other connection.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
