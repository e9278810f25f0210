package daemon

import (
	"context"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/principal"
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

// connLimits bound a listener's connections, by principal. A connection
// is unclaimed from its accept until a request on it authenticates
// (claim): then it is the person's or one worker's until it closes, or
// until a request of another principal claims it.
type connLimits struct {
	// Max caps the connections open at once. Accept waits for one to
	// close, unless MaxUnclaimed is set: then Max caps the claimed ones
	// alone, and a claim past it is refused.
	Max int
	// PersonReserve of Max are kept for the person: the connections
	// claimed by workers' agents are at most Max-PersonReserve together.
	PersonReserve int
	// PerWorker caps the connections one worker's agents claim.
	PerWorker int
	// MaxUnclaimed, when set, caps the connections no request has
	// authenticated yet: one more accepted closes the oldest of them, so
	// idle connections that never authenticate cannot keep anyone out.
	MaxUnclaimed int
}

// limitListener bounds ln's connections as lim says. It keeps what the
// connections need from the wrapped listener's: a *net.UnixConn's
// SyscallConn (the peer-credential check) in particular, which
// golang.org/x/net/netutil.LimitListener's wrapper hides.
func limitListener(ln net.Listener, lim connLimits) net.Listener {
	l := &limitedListener{Listener: ln, lim: lim, done: make(chan struct{}), workers: map[string]int{}}
	if lim.MaxUnclaimed <= 0 {
		l.sem = make(chan struct{}, lim.Max)
	}
	return l
}

type limitedListener struct {
	net.Listener
	lim       connLimits
	sem       chan struct{} // nil: Accept does not wait (MaxUnclaimed)
	done      chan struct{}
	closeOnce sync.Once

	mu        sync.Mutex
	claimed   int            // connections claimed by anyone
	agents    int            // of them, by workers' agents
	workers   map[string]int // by each worker's
	unclaimed []*connState   // oldest first
}

func (l *limitedListener) Accept() (net.Conn, error) {
	if l.sem != nil {
		select {
		case l.sem <- struct{}{}:
		case <-l.done:
			return nil, net.ErrClosed
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		if l.sem != nil {
			<-l.sem
		}
		return nil, err
	}
	cs := &connState{l: l, conn: c}
	var evict *connState
	l.mu.Lock()
	if l.lim.MaxUnclaimed > 0 && len(l.unclaimed) >= l.lim.MaxUnclaimed {
		evict = l.unclaimed[0]
		l.unclaimed = l.unclaimed[1:]
		evict.dropped = true
	}
	l.unclaimed = append(l.unclaimed, cs)
	l.mu.Unlock()
	if evict != nil {
		_ = evict.conn.Close() // its own Close, when the server sees it, gives the rest back
	}
	if uc, ok := c.(*net.UnixConn); ok {
		return &limitedUnixConn{UnixConn: uc, cs: cs}, nil
	}
	return &limitedConn{Conn: c, cs: cs}, nil
}

func (l *limitedListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// connState is one accepted connection's place in its listener's counts.
type connState struct {
	l    *limitedListener
	conn net.Conn
	// Guarded by l.mu.
	claimed bool
	worker  string // the worker whose agent claimed it; "" the person
	dropped bool   // out of the unclaimed list (evicted or closed)
	closed  bool
}

// errConnLimit is a claim past a connection limit; the request is
// answered with it and its connection closed.
func errConnLimit(format string, args ...any) error {
	return errdefs.Errorf(errdefs.RateLimited, format, args...)
}

// claim makes the connection the person's (worker "") or worker's agent's,
// unless that would pass a limit.
func (cs *connState) claim(worker string) error {
	l := cs.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if cs.closed {
		return nil
	}
	if cs.claimed && cs.worker == worker {
		return nil
	}
	// What the connection held is given back before the new claim is
	// weighed: a keep-alive connection passed to another principal.
	wasClaimed, was := cs.claimed, cs.worker
	cs.unclaimLocked()
	lim := l.lim
	var err error
	switch {
	case l.sem == nil && l.claimed >= lim.Max:
		err = errConnLimit("all %d connections are taken (api.max_connections)", lim.Max)
	case worker != "" && l.workers[worker] >= lim.PerWorker:
		err = errConnLimit("worker %q has %d connections open, its most (api.worker_connections); close one", worker, lim.PerWorker)
	case worker != "" && l.agents >= lim.Max-lim.PersonReserve:
		err = errConnLimit("workers' agents hold all %d connections not kept for the person (api.person_connections); close one", lim.Max-lim.PersonReserve)
	}
	if err != nil {
		if wasClaimed {
			cs.claimLocked(was) // the refused request leaves the connection as it was
		}
		return err
	}
	cs.claimLocked(worker)
	return nil
}

func (cs *connState) claimLocked(worker string) {
	l := cs.l
	if !cs.dropped {
		l.unclaimed = slices.DeleteFunc(l.unclaimed, func(o *connState) bool { return o == cs })
		cs.dropped = true
	}
	cs.claimed, cs.worker = true, worker
	l.claimed++
	if worker != "" {
		l.agents++
		l.workers[worker]++
	}
}

func (cs *connState) unclaimLocked() {
	if !cs.claimed {
		return
	}
	l := cs.l
	l.claimed--
	if cs.worker != "" {
		l.agents--
		if l.workers[cs.worker]--; l.workers[cs.worker] <= 0 {
			delete(l.workers, cs.worker)
		}
	}
	cs.claimed, cs.worker = false, ""
}

// release gives everything back when the connection closes; once.
func (cs *connState) release() {
	l := cs.l
	l.mu.Lock()
	if cs.closed {
		l.mu.Unlock()
		return
	}
	cs.closed = true
	cs.unclaimLocked()
	if !cs.dropped {
		l.unclaimed = slices.DeleteFunc(l.unclaimed, func(o *connState) bool { return o == cs })
		cs.dropped = true
	}
	l.mu.Unlock()
	if l.sem != nil {
		<-l.sem
	}
}

// limitedUnixConn gives its place back when closed; embedding the
// *net.UnixConn keeps SyscallConn for SO_PEERCRED.
type limitedUnixConn struct {
	*net.UnixConn
	cs *connState
}

func (c *limitedUnixConn) Close() error {
	err := c.UnixConn.Close()
	c.cs.release()
	return err
}

// limitedConn is the same for any other connection.
type limitedConn struct {
	net.Conn
	cs *connState
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.cs.release()
	return err
}

// stateOf is the listener's record of a connection it accepted.
func stateOf(c net.Conn) *connState {
	switch x := c.(type) {
	case *limitedUnixConn:
		return x.cs
	case *limitedConn:
		return x.cs
	}
	return nil
}

// connStateKey is the context key of a connection's connState.
type connStateKey struct{}

// withConnState puts c's connState in ctx (an http.Server's ConnContext).
func withConnState(ctx context.Context, c net.Conn) context.Context {
	if cs := stateOf(c); cs != nil {
		return context.WithValue(ctx, connStateKey{}, cs)
	}
	return ctx
}

// claimConn claims the request's connection for its caller: a worker
// token's agent counts against its worker's connections and the
// workers' part, anyone else is the person. Past a limit the request is
// refused and its connection closed after the answer.
func claimConn(w http.ResponseWriter, r *http.Request, c principal.Caller) error {
	cs, _ := r.Context().Value(connStateKey{}).(*connState)
	if cs == nil {
		return nil
	}
	worker := ""
	if c.TokenID != "" {
		worker = c.Worker
	}
	if err := cs.claim(worker); err != nil {
		w.Header().Set("Connection", "close")
		return err
	}
	return nil
}
