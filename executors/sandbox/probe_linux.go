package sandbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Probe starts a sandbox around the running binary (which must call Init
// first in main) and reports what it really got. See ProbeWith.
func Probe() Report {
	exe, err := os.Executable()
	if err != nil {
		return Report{Cgroup: "none", Notes: []string{"probe: " + err.Error()}}
	}
	return ProbeWith(exe, Config{})
}

// ProbeWith starts a tiny sandbox around binary (the executor binary, for
// `toolcage sandbox check`) with cfg, without network, and reports what
// the process inside sees: its namespaces against the daemon's, its
// no_new_privs, seccomp and capability state, the Landlock ABI applied,
// and whether it landed in its cgroup. A protection is reported only when
// it is in place.
func ProbeWith(binary string, cfg Config) Report {
	cfg.Network = false
	rep := Report{Cgroup: "none", Unprivileged: os.Geteuid() != 0}
	rep.Notes = append(rep.Notes, userNSNotes()...)
	c := Command(cfg, binary)
	c.probe = true
	out, err := c.StdoutPipe()
	if err != nil {
		rep.Notes = append(rep.Notes, "probe: "+err.Error())
		return rep
	}
	var stderr lockedBuffer
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		rep.Notes = append(rep.Notes, "cannot start a sandbox: "+err.Error())
		return rep
	}
	defer func() {
		c.Kill()
		c.Wait()
	}()
	rep.Notes = append(rep.Notes, c.report.Notes...)

	type result struct {
		r   probeReport
		err error
	}
	ch := make(chan result, 1)
	go func() {
		var res result
		line, err := bufio.NewReader(out).ReadBytes('\n')
		if err != nil {
			res.err = fmt.Errorf("no report from the sandbox: %v", err)
		} else {
			res.err = json.Unmarshal(line, &res.r)
		}
		ch <- res
	}()
	var res result
	select {
	case res = <-ch:
	case <-time.After(15 * time.Second):
		res.err = fmt.Errorf("no report from the sandbox within 15s")
	}
	if res.err != nil {
		msg := res.err.Error()
		if s := strings.TrimSpace(stderr.String()); s != "" {
			msg += ": " + s
		}
		rep.Notes = append(rep.Notes, msg)
		return rep
	}
	in := res.r
	host := nsInodes()
	differs := func(ns string) bool { return in.NS[ns] != "" && host[ns] != "" && in.NS[ns] != host[ns] }
	rep.UserNS, rep.PidNS, rep.MountNS = differs("user"), differs("pid"), differs("mnt")
	rep.NetNS, rep.IPCNS, rep.UTSNS, rep.CgroupNS = differs("net"), differs("ipc"), differs("uts"), differs("cgroup")
	rep.NoNewPrivs = in.NoNewPrivs
	rep.CapsDropped = in.CapsZero
	rep.Seccomp = in.Applied.Seccomp && in.SeccompMode == 2
	rep.LandlockABI = in.Applied.LandlockABI
	if c.cg != nil {
		b, _ := os.ReadFile(filepath.Join(c.cg.pids, "cgroup.procs"))
		m, _ := os.ReadFile(filepath.Join(c.cg.mem, "cgroup.procs"))
		if len(bytes.TrimSpace(b)) > 0 && len(bytes.TrimSpace(m)) > 0 {
			rep.Cgroup = c.cg.version
			if c.cg.cpu != "" {
				p, _ := os.ReadFile(filepath.Join(c.cg.cpu, "cgroup.procs"))
				rep.CPUQuota = len(bytes.TrimSpace(p)) > 0
			}
		} else {
			rep.Notes = append(rep.Notes, "the sandbox did not land in its cgroup")
		}
	}
	if in.Pid == 1 {
		rep.Notes = append(rep.Notes, "executor runs as pid 1, without its launcher")
	}
	if in.Dumpable {
		rep.Notes = append(rep.Notes, "executor is dumpable")
	}
	if rep.LandlockABI == 0 {
		rep.Notes = append(rep.Notes, "Landlock not applied")
	}
	if !seccompSupported {
		rep.Notes = append(rep.Notes, "seccomp: no syscall table for this architecture")
	}
	return rep
}

// userNSNotes explains the kernel's settings for unprivileged user
// namespaces, which an unprivileged daemon needs.
func userNSNotes() []string {
	var notes []string
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	if v := read("/proc/sys/user/max_user_namespaces"); v == "0" {
		notes = append(notes, "user.max_user_namespaces is 0: no user namespaces at all")
	}
	if v := read("/proc/sys/kernel/unprivileged_userns_clone"); v == "0" {
		notes = append(notes, "kernel.unprivileged_userns_clone is 0: an unprivileged daemon cannot sandbox")
	}
	if v := read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); v == "1" {
		notes = append(notes, "AppArmor restricts unprivileged user namespaces: an unprivileged daemon needs an AppArmor profile that allows userns")
	}
	return notes
}

// lockedBuffer is a bytes.Buffer safe to read while exec's copying
// goroutine still writes the probe's stderr into it (the probe is read
// before it has exited when it fails to report).
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
