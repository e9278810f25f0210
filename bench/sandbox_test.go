package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/executors/host"
	"github.com/toolcage/toolcage/executors/sandbox"
)

// BenchmarkSandboxedExecutorColdStart: BenchmarkExecutorColdStart with the
// daemon's sandbox (its default configuration) around the executor: clone
// into new namespaces and a cgroup, build the root, confine, exec, and
// complete the go-plugin handshake.
func BenchmarkSandboxedExecutorColdStart(b *testing.B) {
	exe := filepath.Join(binDir(b), "toolcage-executor")
	cfg, err := daemon.LoadConfig("", nil)
	if err != nil {
		b.Fatal(err)
	}
	state, err := os.MkdirTemp("", "tcb-sbx")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(state) })
	// The sandbox passes through it as the mapped uid, as through the
	// daemon's own state dir.
	if err := os.Chmod(state, 0o711); err != nil {
		b.Fatal(err)
	}
	// As the daemon does: the lean launcher next to the executor.
	r := &host.SandboxRunner{Path: exe, Config: cfg.SandboxConfig(), StateDir: state,
		Launcher: filepath.Join(filepath.Dir(exe), host.LauncherBinary)}
	if err := r.Check().Meets(r.Config.Require); err != nil {
		b.Fatalf("no sandbox here: %v", err)
	}
	benchColdStart(b, r)
}

// BenchmarkSandboxedExecutorIdleRSS: resident memory of each idle,
// sandboxed executor of a real daemon, after it served calls. Each child
// of the daemon is one sandbox: its launcher (pid 1 inside) and, below it,
// the executor. Reports, averaged over the sandboxes: the RSS of all their
// processes (MiB), of the executor alone (executor-MiB), and their
// proportional set size (pss-MiB: shared pages, such as the binary both
// processes are images of, counted once).
func BenchmarkSandboxedExecutorIdleRSS(b *testing.B) {
	d := startDaemon(b) // sandboxed; prewarms a js executor
	createTool(b, d.client, trivialTool)
	createTool(b, d.client, echoTool)
	for range 20 {
		callAdd(b, d.client)
		callTool(b, d.client, "echo_x", noArgs)
	}
	time.Sleep(time.Second) // idle; any replacement has started
	sandboxes, err := sandboxTrees(d.cmd.Process.Pid)
	if err != nil {
		b.Fatal(err)
	}
	if len(sandboxes) < 2 {
		b.Fatalf("want a js and a shell sandbox under the daemon, found %d", len(sandboxes))
	}
	var all, exe, pss float64
	for b.Loop() {
		all, exe, pss = 0, 0, 0
		for _, sb := range sandboxes {
			for i, pid := range sb {
				rss, err := rssMiB(pid)
				if err != nil {
					b.Fatal(err)
				}
				all += rss
				if i > 0 { // below the launcher
					exe += rss
				}
				p, err := pssMiB(pid)
				if err != nil {
					b.Fatal(err)
				}
				pss += p
			}
		}
	}
	n := float64(len(sandboxes))
	b.ReportMetric(all/n, "MiB")
	b.ReportMetric(exe/n, "executor-MiB")
	b.ReportMetric(pss/n, "pss-MiB")
	b.ReportMetric(n, "sandboxes")
}

// sandboxTrees returns, for each child of pid, that child and its
// descendants (the child first), read from /proc.
func sandboxTrees(pid int) ([][]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	children := map[int][]int{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		pp, err := ppid(p)
		if err != nil {
			continue // gone meanwhile
		}
		children[pp] = append(children[pp], p)
	}
	var trees [][]int
	for _, c := range children[pid] {
		tree := []int{c}
		for i := 0; i < len(tree); i++ {
			tree = append(tree, children[tree[i]]...)
		}
		trees = append(trees, tree)
	}
	return trees, nil
}

// ppid reads a process's parent from /proc/PID/stat (after the command
// name, which may hold spaces and parentheses).
func ppid(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	return strconv.Atoi(f[1])
}

// pssMiB reads a process's proportional set size.
func pssMiB(pid int) (float64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "Pss:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return float64(kb) / 1024, err
		}
	}
	return 0, fmt.Errorf("no Pss for %d", pid)
}

// BenchmarkSandboxedExecutorColdStartIdmap: the cost of an idmapped
// workspace, paired. Each round starts three sandboxed executors (as
// BenchmarkSandboxedExecutorColdStart) holding a writable workspace at
// /workspace: none; one the sandbox's uid owns (cloned and bound, no
// mapping); one another uid owns (idmapped to the sandbox's user).
// Reports the p50 of each and the p50 of the per-round difference
// between the idmapped and the plain bind (idmap-ms), which is what the
// mapping adds.
func BenchmarkSandboxedExecutorColdStartIdmap(b *testing.B) {
	exe := filepath.Join(binDir(b), "toolcage-executor")
	cfg, err := daemon.LoadConfig("", nil)
	if err != nil {
		b.Fatal(err)
	}
	if os.Geteuid() != 0 {
		b.Skip("idmapped binds are a root daemon's")
	}
	state, err := os.MkdirTemp("", "tcb-sbx")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(state) })
	if err := os.Chmod(state, 0o711); err != nil {
		b.Fatal(err)
	}
	ws := map[string]string{}
	for name, owner := range map[string]int{"bind": sandbox.DefaultHostID, "idmap": 4242} {
		d := filepath.Join(state, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			b.Fatal(err)
		}
		if err := os.Chown(d, owner, owner); err != nil {
			b.Fatal(err)
		}
		ws[name] = d
	}
	r := &host.SandboxRunner{Path: exe, Config: cfg.SandboxConfig(), StateDir: state,
		Launcher: filepath.Join(filepath.Dir(exe), host.LauncherBinary)}
	p := host.NewPool(host.PoolConfig{Runners: map[string]host.Runner{"process": r}})
	defer p.Close()
	keys := map[string]host.Key{"none": host.NewKey(executors.KindJS, "process", nil)}
	for name, d := range ws {
		keys[name] = host.NewKey(executors.KindJS, "process", nil).WithMounts([]host.Mount{{Source: d, Target: "/workspace", Writable: true}})
	}
	lat := map[string][]time.Duration{}
	var diff []time.Duration
	for b.Loop() {
		round := map[string]time.Duration{}
		for _, name := range []string{"none", "bind", "idmap"} {
			t := time.Now()
			if err := p.StartOne(context.Background(), keys[name]); err != nil {
				b.Fatalf("%s: %v", name, err)
			}
			round[name] = time.Since(t)
			lat[name] = append(lat[name], round[name])
		}
		diff = append(diff, round["idmap"]-round["bind"])
	}
	for _, name := range []string{"none", "bind", "idmap"} {
		b.ReportMetric(float64(median(lat[name]).Microseconds())/1000, "p50-"+name+"-ms")
	}
	b.ReportMetric(float64(median(diff).Microseconds())/1000, "idmap-ms")
}
