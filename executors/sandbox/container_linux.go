package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

func containerMain() int {
	if os.Getpid() != 1 {
		return fail("container stage outside a container's pid 1; refusing")
	}
	control, work := os.Getenv(EnvContainerControl), os.Getenv(EnvContainerWorkDir)
	if control == "" || work == "" {
		return fail("container stage: %s and %s are required", EnvContainerControl, EnvContainerWorkDir)
	}
	setName("toolcage-init")
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	ln, err := net.Listen("unix", control)
	if err != nil {
		return fail("control socket: %v", err)
	}
	// The daemon reaches the socket through the dir's group (or as root).
	if err := os.Chmod(control, 0o660); err != nil {
		return fail("control socket: %v", err)
	}
	var dir unix.Stat_t
	if err := unix.Stat(filepath.Dir(control), &dir); err == nil {
		os.Chown(control, -1, int(dir.Gid))
	}
	devnull, err := os.Open("/dev/null")
	if err != nil {
		return fail("%v", err)
	}
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range stageEnv(os.Environ(), stageRun) {
		if k, _, _ := strings.Cut(kv, "="); k == EnvContainerControl || k == EnvContainerWorkDir {
			continue
		}
		env = append(env, kv)
	}
	pid, err := syscall.ForkExec("/proc/self/exe", os.Args, &syscall.ProcAttr{
		Dir: work, Env: env, Files: []uintptr{devnull.Fd(), 1, 2},
	})
	devnull.Close()
	if err != nil {
		return fail("start executor: %v", err)
	}
	l := &launcher{lc: &launchConfig{Config: Config{WorkDir: work}}, exec: pid}
	c := &containerInit{l: l}
	c.oom, c.pids = cgroupEvents()
	exited := make(chan int, 1)
	go func() {
		for {
			var ws unix.WaitStatus
			wpid, err := unix.Wait4(-1, &ws, 0, nil)
			if err == unix.EINTR {
				continue
			}
			if err != nil || wpid == pid {
				exited <- exitStatus(ws, err)
				return
			}
		}
	}()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go c.serve(conn)
		}
	}()
	return <-exited
}

// containerInit is pid 1's state in a container.
type containerInit struct {
	l  *launcher
	mu sync.Mutex
	// oom and pids are the cgroup counters at the last reset.
	oom, pids int64
}

// maxControlLine bounds one request on the control socket.
const maxControlLine = 64 << 10

// serve answers requests on one connection, one at a time, a line each:
// "reset", or "stat" and a JSON list of paths (the runner's mount
// targets, asked before any call has run).
func (c *containerInit) serve(conn net.Conn) {
	defer conn.Close()
	rd := bufio.NewReaderSize(conn, 4096)
	for {
		line, err := readLine(rd, maxControlLine)
		if err != nil {
			return
		}
		var r ContainerReply
		verb, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch verb {
		case "reset":
			r = c.reset()
		case "stat":
			var paths []string
			if err := json.Unmarshal([]byte(arg), &paths); err != nil {
				r.Err = "stat: " + err.Error()
				break
			}
			r.OK = true
			for _, p := range paths {
				r.Stats = append(r.Stats, statTarget(p))
			}
		default:
			r.Err = "unknown request " + strconv.Quote(line)
		}
		b, _ := json.Marshal(r)
		if _, err := conn.Write(append(b, '\n')); err != nil {
			return
		}
	}
}

// readLine reads one line of at most limit bytes; a longer one is an error.
func readLine(rd *bufio.Reader, limit int) (string, error) {
	var b []byte
	for {
		chunk, err := rd.ReadSlice('\n')
		b = append(b, chunk...)
		if len(b) > limit {
			return "", errors.New("request too long")
		}
		if err == nil {
			return string(b), nil
		}
		if err != bufio.ErrBufferFull {
			return "", err
		}
	}
}

func (c *containerInit) reset() ContainerReply {
	c.mu.Lock()
	defer c.mu.Unlock()
	rep := c.l.handle("reset")
	r := ContainerReply{OK: rep.OK, Err: rep.Err, CPUMillis: rep.CPUMillis}
	oom, pids := cgroupEvents()
	switch {
	case oom > c.oom:
		r.Limit = "memory"
	case pids > c.pids:
		r.Limit = "pids"
	}
	c.oom, c.pids = oom, pids
	return r
}

// cgroupEvents reads the container's OOM kills and pids.max refusals, on
// cgroup v2 or v1 (the engine mounts the container's own groups).
func cgroupEvents() (oom, pids int64) {
	for _, f := range []string{"/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"} {
		if v := readKey(f, "oom_kill"); v > 0 {
			oom = v
			break
		}
	}
	for _, f := range []string{"/sys/fs/cgroup/pids.events", "/sys/fs/cgroup/pids/pids.events"} {
		if v := readKey(f, "max"); v > 0 {
			pids = v
			break
		}
	}
	return oom, pids
}
