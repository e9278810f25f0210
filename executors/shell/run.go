package shell

// How a command is run and stopped.
//
// Process group: the command is started as the leader of a new process
// group (Setpgid), and every signal the executor sends goes to the whole
// group, so pipelines, subshells and background jobs are reached too. On
// Linux the child also gets SIGKILL if the executor dies (Pdeathsig); that
// reaches the leader only, the rest is left to the sandbox around the
// executor.
//
// Stopping: when the timeout passes or ctx ends, the group gets SIGTERM,
// then Grace, then SIGKILL. The grace ends early once the group leader
// has exited; anything still left in the group then gets SIGKILL at once.
// Output past the cap is not a request to wind down, so the group gets
// SIGKILL straight away.
//
// Leftovers: when the leader exits on its own, whatever is still in its
// group (a job put in the background with &) gets SIGKILL. On Linux the
// leader is not reaped until then (waitid with WNOWAIT), so its pid, which
// is also the group id, cannot have been reused by an unrelated process
// when the group is signalled. Elsewhere the leader is reaped first; the
// window for reuse is tiny but there. A process that left the group
// (setsid, a daemonising tool) is out of reach here; the sandbox's pid
// namespace and pids cap are what contain it.
//
// Pipes: stdout and stderr are pipes the executor reads itself, counting
// bytes as they arrive; a stream that passes the cap stops the call at
// once, so `yes` ends within one pipe buffer of the cap. After the group
// is gone, readers get drainWait to reach the end of the pipes; a process
// that escaped the group and still holds one open cannot keep the call
// waiting beyond that, and the stream is marked cut (truncated).
//
// stdin is /dev/null.

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
)

// drainWait is how long the readers get to reach the end of stdout and
// stderr once the process group is gone.
const drainWait = 250 * time.Millisecond

// readChunk is the size of one read from a pipe.
const readChunk = 32 << 10

// stream captures one output pipe up to a cap.
type stream struct {
	name  string
	f     *os.File
	limit int64

	buf  []byte // what was read, at most limit bytes
	n    int64  // bytes read in all
	over bool   // more than limit bytes arrived
	cut  bool   // reading stopped before the end of the stream
}

// read reads the pipe until its end, a read deadline, or more than limit
// bytes, which it reports on overflow once.
func (s *stream) read(overflow chan<- string) {
	chunk := make([]byte, readChunk)
	for {
		n, err := s.f.Read(chunk)
		if n > 0 {
			s.n += int64(n)
			if room := s.limit - int64(len(s.buf)); int64(n) > room {
				s.buf = append(s.buf, chunk[:room]...)
				s.over = true
				overflow <- s.name
				return
			}
			s.buf = append(s.buf, chunk[:n]...)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.cut = true
			}
			return
		}
	}
}

// outcome is what a finished run produced.
type outcome struct {
	stdout, stderr *stream
	exitCode       int    // -1 when killed by a signal
	signal         string // the signal's name when killed by one
}

// run starts p and supervises it to the end.
func (e *Executor) run(ctx context.Context, p *program, lim executors.Limits) (*outcome, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, errdefs.Errorf(errdefs.ExecutorFailed, "shell: make pipe: %v", err)
	}
	defer outR.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		outW.Close()
		return nil, errdefs.Errorf(errdefs.ExecutorFailed, "shell: make pipe: %v", err)
	}
	defer errR.Close()

	cmd := &exec.Cmd{
		Path:        p.path,
		Args:        p.argv,
		Env:         p.env,
		Dir:         p.dir,
		Stdin:       nil, // /dev/null
		Stdout:      outW,
		Stderr:      errW,
		SysProcAttr: procAttr(),
	}
	err = cmd.Start()
	// The child holds its own copies now; ours must go so that the readers
	// see the end of the pipes when the child's side closes.
	outW.Close()
	errW.Close()
	if err != nil {
		if p.viaShell {
			return nil, errdefs.Errorf(errdefs.ExecutorFailed, "shell: start %s: %v", p.path, err)
		}
		return nil, &startFailure{name: p.argv[0], err: err}
	}
	pgid := cmd.Process.Pid

	overflow := make(chan string, 2)
	stdout := &stream{name: "stdout", f: outR, limit: lim.OutputBytes}
	stderr := &stream{name: "stderr", f: errR, limit: lim.OutputBytes}
	var readers sync.WaitGroup
	readers.Go(func() { stdout.read(overflow) })
	readers.Go(func() { stderr.read(overflow) })

	exited := make(chan struct{})
	var reaped bool
	var waitErr error
	go func() {
		reaped, waitErr = waitExited(cmd)
		close(exited)
	}()

	timer := time.NewTimer(lim.Timeout)
	defer timer.Stop()
	var stop error
	select {
	case <-exited:
	case name := <-overflow:
		stop = outputError(name, lim.OutputBytes)
		killGroup(pgid, syscall.SIGKILL)
		<-exited
	case <-timer.C:
		stop = errdefs.LimitError(errdefs.LimitTimeout, "shell: call exceeded its %v timeout", lim.Timeout)
		e.terminate(pgid, exited)
	case <-ctx.Done():
		stop = stopError(ctx.Err())
		e.terminate(pgid, exited)
	}

	// The leader is gone; so is whatever it left behind.
	killGroup(pgid, syscall.SIGKILL)
	deadline := time.Now().Add(drainWait)
	_ = outR.SetReadDeadline(deadline)
	_ = errR.SetReadDeadline(deadline)
	readers.Wait()
	if !reaped {
		waitErr = cmd.Wait()
	}

	if stop != nil {
		return nil, stop
	}
	for _, s := range []*stream{stdout, stderr} {
		if s.over {
			return nil, outputError(s.name, lim.OutputBytes)
		}
	}
	st := cmd.ProcessState
	if st == nil {
		return nil, errdefs.Errorf(errdefs.ExecutorFailed, "shell: wait: %v", waitErr)
	}
	o := &outcome{stdout: stdout, stderr: stderr, exitCode: st.ExitCode()}
	if sig, ok := exitSignal(st); ok {
		o.exitCode, o.signal = -1, sig
	}
	return o, nil
}

// terminate asks the group to stop, waits up to Grace for the leader to
// exit, then kills the group. It returns once the leader has exited.
func (e *Executor) terminate(pgid int, exited <-chan struct{}) {
	killGroup(pgid, syscall.SIGTERM)
	grace := time.NewTimer(e.cfg.Grace)
	defer grace.Stop()
	select {
	case <-exited:
		return
	case <-grace.C:
	}
	killGroup(pgid, syscall.SIGKILL)
	<-exited
}

// outputError is the error for a stream that passed the cap.
func outputError(name string, limit int64) error {
	return errdefs.LimitError(errdefs.LimitOutput, "shell: %s exceeded %d bytes", name, limit)
}

// startFailure carries a failure to find or start an argv program back to
// Execute, which decides (notRunnable) whether it is the tool's own.
type startFailure struct {
	name string
	err  error
}

func (f *startFailure) Error() string { return f.name + ": " + f.err.Error() }

func (f *startFailure) Unwrap() error { return f.err }
