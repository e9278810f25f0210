package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroupSet is one sandbox's cgroups: a single v2 group, or a memory, a
// pids and (where mounted) a cpu group on v1. The launcher joins them by
// writing "0" to the cgroup.procs files the host opened (open-time
// credentials decide, so a root daemon's sandbox needs no write access of
// its own).
type cgroupSet struct {
	version string // "v2" or "v1"
	mem     string // dir holding the memory files
	pids    string // dir holding the pids files
	// cpu is the dir holding the CPU quota files, "" without a quota;
	// cpuNote then says why.
	cpu, cpuNote string
	// procs are the v1 cgroup.procs files the launcher writes itself into;
	// dir is the v2 group, which the launcher is cloned into.
	procs []*os.File
	dir   *os.File

	oomKills, pidsMax int64 // event counts at the last check
}

// cgroupMount is one mounted cgroup hierarchy.
type cgroupMount struct {
	dir         string   // mount point
	root        string   // path of the hierarchy that is mounted there
	v2          bool     // cgroup2
	controllers []string // v1: the controllers bound to it
}

// cgroupFS is where the cgroup file systems are found; tests point it at a
// fake tree.
type cgroupFS struct {
	mounts []cgroupMount
	// own maps a v1 controller, or "" for v2, to the daemon's cgroup path.
	own map[string]string
}

func readCgroupFS() (*cgroupFS, error) {
	fs := &cgroupFS{own: map[string]string{}}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(string(mi), "\n") {
		// id parent maj:min root mountpoint opts [optional...] - fstype source superopts
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 {
			continue
		}
		m := cgroupMount{dir: unescapeMount(f[4]), root: unescapeMount(f[3])}
		switch g[0] {
		case "cgroup2":
			m.v2 = true
		case "cgroup":
			for _, o := range strings.Split(g[2], ",") {
				if o == "memory" || o == "pids" || o == "cpu" {
					m.controllers = append(m.controllers, o)
				}
			}
			if len(m.controllers) == 0 {
				continue
			}
		default:
			continue
		}
		fs.mounts = append(fs.mounts, m)
	}
	pc, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(strings.TrimSpace(string(pc)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			fs.own[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			fs.own[c] = parts[2]
		}
	}
	return fs, nil
}

// unescapeMount undoes the octal escapes of /proc/self/mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// dirOf is the directory of cgroup path p (a path inside the hierarchy) in
// mount m, or "" when m does not show p.
func (m cgroupMount) dirOf(p string) string {
	if m.root == "/" {
		return filepath.Join(m.dir, p)
	}
	if rest, ok := strings.CutPrefix(p, m.root); ok && (rest == "" || rest[0] == '/') {
		return filepath.Join(m.dir, rest)
	}
	return ""
}

// parentPath is where a sandbox's cgroups go in a hierarchy whose own
// cgroup is own.
func parentPath(cfg Config, own string) string {
	if cfg.CgroupParent != "" {
		return filepath.Clean("/" + cfg.CgroupParent)
	}
	return filepath.Join("/", own, "toolcage")
}

// newCgroupSet makes and limits the cgroups of one sandbox called name,
// trying v2 first, then v1. It returns why it could not in err.
func newCgroupSet(fs *cgroupFS, cfg Config, name string) (*cgroupSet, error) {
	var errs []error
	for _, m := range fs.mounts {
		if !m.v2 {
			continue
		}
		own, ok := fs.own[""]
		if !ok {
			continue
		}
		cs, err := newCgroupV2(m, parentPath(cfg, own), name, cfg)
		if err == nil {
			return cs, nil
		}
		errs = append(errs, fmt.Errorf("cgroup v2: %w", err))
	}
	var memM, pidsM, cpuM *cgroupMount
	for i := range fs.mounts {
		for _, c := range fs.mounts[i].controllers {
			switch c {
			case "memory":
				memM = &fs.mounts[i]
			case "pids":
				pidsM = &fs.mounts[i]
			case "cpu":
				cpuM = &fs.mounts[i]
			}
		}
	}
	if memM != nil && pidsM != nil {
		cs, err := newCgroupV1(memM, pidsM, cpuM, fs, name, cfg)
		if err == nil {
			return cs, nil
		}
		errs = append(errs, fmt.Errorf("cgroup v1: %w", err))
	} else if len(errs) == 0 {
		errs = append(errs, errors.New("no cgroup hierarchy with the memory and pids controllers"))
	}
	return nil, errors.Join(errs...)
}

func hasControllers(dir string, want ...string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return false
	}
	have := strings.Fields(string(b))
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}

// enableV2 makes the memory and pids controllers available to dir's
// children, creating dir and enabling them in its ancestors as needed.
func enableV2(m cgroupMount, p string) error {
	dir := m.dirOf(p)
	if dir == "" {
		return fmt.Errorf("%s is not under the cgroup2 mount %s", p, m.dir)
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	if !hasControllers(dir, "memory", "pids") {
		if p == "/" || p == m.root {
			return errors.New("the memory and pids controllers are not available in the cgroup2 hierarchy")
		}
		if err := enableV2(m, filepath.Dir(p)); err != nil {
			return err
		}
	}
	sc, _ := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if f := strings.Fields(string(sc)); contains(f, "memory") && contains(f, "pids") {
		return nil
	}
	err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+memory +pids"), 0o644)
	if errors.Is(err, syscall.EBUSY) {
		return delegationError(p)
	}
	return err
}

// delegationError says why controllers cannot be enabled in p, and how to
// configure around it.
func delegationError(p string) error {
	return fmt.Errorf("cannot enable memory and pids in %s: it holds processes (a cgroup v2 group with processes cannot delegate controllers; run the daemon in a leaf of a delegated group and set sandbox.cgroup_parent to a sibling)", p)
}

// cpuPeriod is the CFS period the quota is given for: 100 ms, the
// kernel's default.
const cpuPeriod = 100000

// cpuQuota is the quota in µs per cpuPeriod for cpus CPUs; the kernel
// refuses less than 1 ms.
func cpuQuota(cpus float64) int64 {
	return max(int64(cpus*cpuPeriod), 1000)
}

// enableCPUV2 makes the cpu controller available to the children of the
// group at p, if the group has it; it is optional, so an ancestor is never
// changed for it.
func enableCPUV2(m cgroupMount, p string) error {
	dir := m.dirOf(p)
	if !hasControllers(dir, "cpu") {
		return fmt.Errorf("the cpu controller is not available in %s", dir)
	}
	sc, _ := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if contains(strings.Fields(string(sc)), "cpu") {
		return nil
	}
	return os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+cpu"), 0o644)
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func newCgroupV2(m cgroupMount, parent, name string, cfg Config) (*cgroupSet, error) {
	if !hasControllers(m.dir, "memory", "pids") {
		return nil, fmt.Errorf("the memory and pids controllers are not available in %s (bound to cgroup v1?)", m.dir)
	}
	if err := enableV2(m, parent); err != nil {
		return nil, err
	}
	dir := filepath.Join(m.dirOf(parent), name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	cs := &cgroupSet{version: "v2", mem: dir, pids: dir}
	err := errors.Join(
		writeCg(dir, "memory.max", cfg.MemoryBytes),
		writeCg(dir, "pids.max", int64(cfg.Pids)),
	)
	// Optional knobs: no swap, and one OOM kill takes the whole sandbox.
	_ = writeCg(dir, "memory.swap.max", 0)
	_ = writeCg(dir, "memory.oom.group", 1)
	if cerr := enableCPUV2(m, parent); cerr != nil {
		cs.cpuNote = cerr.Error()
	} else if cerr := os.WriteFile(filepath.Join(dir, "cpu.max"), fmt.Appendf(nil, "%d %d", cpuQuota(cfg.CPUs), cpuPeriod), 0o644); cerr != nil {
		cs.cpuNote = "cpu.max: " + cerr.Error()
	} else {
		cs.cpu = dir
	}
	if err == nil {
		err = cs.open()
	}
	if err != nil {
		cs.remove()
		return nil, err
	}
	return cs, nil
}

func newCgroupV1(memM, pidsM, cpuM *cgroupMount, fs *cgroupFS, name string, cfg Config) (*cgroupSet, error) {
	cs := &cgroupSet{version: "v1"}
	for _, h := range []struct {
		m    *cgroupMount
		ctl  string
		dest *string
	}{{memM, "memory", &cs.mem}, {pidsM, "pids", &cs.pids}} {
		parent := parentPath(cfg, fs.own[h.ctl])
		pdir := h.m.dirOf(parent)
		if pdir == "" {
			cs.remove()
			return nil, fmt.Errorf("%s: %s is not under the mount %s", h.ctl, parent, h.m.dir)
		}
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			cs.remove()
			return nil, err
		}
		dir := filepath.Join(pdir, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			cs.remove()
			return nil, err
		}
		*h.dest = dir
	}
	err := errors.Join(
		writeCg(cs.mem, "memory.limit_in_bytes", cfg.MemoryBytes),
		writeCg(cs.pids, "pids.max", int64(cfg.Pids)),
	)
	// Only where swap accounting is on; must follow limit_in_bytes.
	_ = writeCg(cs.mem, "memory.memsw.limit_in_bytes", cfg.MemoryBytes)
	if err == nil {
		cs.cpuV1(cpuM, memM, pidsM, fs, name, cfg)
	}
	if err == nil {
		err = cs.open()
	}
	if err != nil {
		cs.remove()
		return nil, err
	}
	return cs, nil
}

// cpuV1 gives the set a CPU quota where it can, and notes why not where
// it cannot: the cpu controller is optional. It is mounted on its own, or
// with cpuacct, or (rarely) with memory or pids, whose group then holds
// the quota.
func (cs *cgroupSet) cpuV1(cpuM, memM, pidsM *cgroupMount, fs *cgroupFS, name string, cfg Config) {
	var dir string
	switch cpuM {
	case nil:
		cs.cpuNote = "no cgroup v1 hierarchy with the cpu controller"
		return
	case memM:
		dir = cs.mem
	case pidsM:
		dir = cs.pids
	default:
		parent := parentPath(cfg, fs.own["cpu"])
		pdir := cpuM.dirOf(parent)
		if pdir == "" {
			cs.cpuNote = fmt.Sprintf("cpu: %s is not under the mount %s", parent, cpuM.dir)
			return
		}
		dir = filepath.Join(pdir, name)
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			cs.cpuNote = "cpu: " + err.Error()
			return
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			cs.cpuNote = "cpu: " + err.Error()
			return
		}
		cs.cpu = dir // removed with the set from here on
	}
	if err := errors.Join(writeCg(dir, "cpu.cfs_period_us", cpuPeriod), writeCg(dir, "cpu.cfs_quota_us", cpuQuota(cfg.CPUs))); err != nil {
		cs.cpuNote = "cpu quota: " + err.Error()
		if dir != cs.mem && dir != cs.pids {
			os.Remove(dir)
		}
		cs.cpu = ""
		return
	}
	cs.cpu = dir
}

func writeCg(dir, file string, v int64) error {
	return os.WriteFile(filepath.Join(dir, file), []byte(strconv.FormatInt(v, 10)), 0o644)
}

// dirs are the set's distinct group directories.
func (cs *cgroupSet) dirs() []string {
	var ds []string
	for _, d := range []string{cs.mem, cs.pids, cs.cpu} {
		if d != "" && !contains(ds, d) {
			ds = append(ds, d)
		}
	}
	return ds
}

// throttled returns how often the CPU quota stopped the sandbox, and for
// how long in all, from cpu.stat; -1 without a quota.
func (cs *cgroupSet) throttled() (periods int64, d time.Duration) {
	if cs.cpu == "" {
		return -1, 0
	}
	f := filepath.Join(cs.cpu, "cpu.stat")
	if us := readKey(f, "throttled_usec"); us > 0 { // v2
		return readKey(f, "nr_throttled"), time.Duration(us) * time.Microsecond
	}
	return readKey(f, "nr_throttled"), time.Duration(readKey(f, "throttled_time")) // v1: ns
}

// open opens the v2 group, or the v1 cgroup.procs files.
func (cs *cgroupSet) open() error {
	if cs.version == "v2" {
		f, err := os.OpenFile(cs.mem, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		cs.dir = f
		return err
	}
	for _, d := range cs.dirs() {
		f, err := os.OpenFile(filepath.Join(d, "cgroup.procs"), os.O_WRONLY|os.O_CREATE|syscall.O_CLOEXEC, 0o644)
		if err != nil {
			cs.closeFiles()
			return err
		}
		cs.procs = append(cs.procs, f)
	}
	return nil
}

func (cs *cgroupSet) closeFiles() {
	for _, f := range cs.procs {
		f.Close()
	}
	if cs.dir != nil {
		cs.dir.Close()
	}
	cs.procs, cs.dir = nil, nil
}

// events returns the OOM kills and pids-limit hits counted so far.
func (cs *cgroupSet) events() (oom, pidsMax int64) {
	if cs.version == "v2" {
		oom = readKey(filepath.Join(cs.mem, "memory.events"), "oom_kill")
	} else {
		oom = readKey(filepath.Join(cs.mem, "memory.oom_control"), "oom_kill")
	}
	return oom, readKey(filepath.Join(cs.pids, "pids.events"), "max")
}

// check reports a limit broken since the last check.
func (cs *cgroupSet) check() error {
	oom, pm := cs.events()
	defer func() { cs.oomKills, cs.pidsMax = oom, pm }()
	switch {
	case oom > cs.oomKills:
		return &LimitError{Limit: "memory", Msg: fmt.Sprintf("sandbox memory limit reached: %d process(es) killed", oom-cs.oomKills)}
	case pm > cs.pidsMax:
		return &LimitError{Limit: "pids", Msg: "sandbox process limit reached: fork refused"}
	}
	return nil
}

// current returns the tasks in the pids group, or -1.
func (cs *cgroupSet) current() int64 {
	b, err := os.ReadFile(filepath.Join(cs.pids, "pids.current"))
	if err != nil {
		return -1
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

func readKey(path, key string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if ok && k == key {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// remove kills what is left in the groups and removes them. The sandbox's
// pid namespace is gone by the time it is called, so this is a backstop.
func (cs *cgroupSet) remove() {
	cs.closeFiles()
	for _, d := range cs.dirs() {
		if d == "" {
			continue
		}
		if os.WriteFile(filepath.Join(d, "cgroup.kill"), []byte("1"), 0) != nil {
			if b, err := os.ReadFile(filepath.Join(d, "cgroup.procs")); err == nil {
				for _, f := range strings.Fields(string(b)) {
					if pid, err := strconv.Atoi(f); err == nil {
						syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			}
		}
		for i := 0; ; i++ {
			err := os.Remove(d)
			if err == nil || errors.Is(err, os.ErrNotExist) || i == 50 {
				break
			}
			time.Sleep(time.Duration(i+1) * time.Millisecond)
		}
	}
}
