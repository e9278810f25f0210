package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolcage/toolcage/internal/testutil"
)

// TestCgroupParent makes a sandbox under a configured parent and finds
// its groups there, in every hierarchy it uses.
func TestCgroupParent(t *testing.T) {
	testutil.NeedRoot(t)
	parent := fmt.Sprintf("/toolcage-test-%d", os.Getpid())
	c := longRunning(t, Config{CgroupParent: parent}, "exec sleep 100")
	if c.cg == nil {
		t.Fatalf("no cgroup: %v", c.Report().Notes)
	}
	dirs := c.cg.dirs()
	t.Cleanup(func() {
		for _, d := range dirs {
			os.Remove(filepath.Dir(d))
		}
	})
	for _, d := range dirs {
		if filepath.Base(filepath.Dir(d)) != parent[1:] {
			t.Errorf("group %s is not under %s", d, parent)
		}
		// The launcher joins its v1 groups itself, beside building its root.
		var procs []byte
		var err error
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if procs, err = os.ReadFile(filepath.Join(d, "cgroup.procs")); err != nil || len(procs) > 0 {
				break
			}
		}
		if err != nil || len(strings.Fields(string(procs))) == 0 {
			t.Errorf("%s holds no process: %q %v", d, procs, err)
		}
	}
	if c.cg.cpu == "" {
		t.Errorf("no CPU quota: %s", c.cg.cpuNote)
	}
}

func TestDelegationErrorNamesTheKey(t *testing.T) {
	if msg := delegationError("/x").Error(); !strings.Contains(msg, "sandbox.cgroup_parent") {
		t.Fatalf("%q does not name the config key", msg)
	}
}

// TestProbeCPUQuota: where a cpu controller is mounted, a root daemon's
// sandbox lands in a CPU-capped group, and Probe says so.
func TestProbeCPUQuota(t *testing.T) {
	testutil.NeedRoot(t)
	fs, err := readCgroupFS()
	if err != nil {
		t.Fatal(err)
	}
	hasCPU := false
	for _, m := range fs.mounts {
		hasCPU = hasCPU || contains(m.controllers, "cpu") || (m.v2 && hasControllers(m.dir, "cpu"))
	}
	if !hasCPU {
		t.Skip("no cpu controller on this machine")
	}
	if r := Probe(); !r.CPUQuota {
		t.Fatalf("no CPU quota: %+v", r)
	}
}

func TestCgroupV2CPU(t *testing.T) {
	for _, tt := range []struct {
		name, controllers string
		cpuMax            string // "" for none
	}{
		{"delegated", "cpu memory pids\n", "25000 100000"},
		{"no cpu controller", "memory pids\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			os.WriteFile(filepath.Join(root, "cgroup.controllers"), []byte("cpu memory pids\n"), 0o644)
			os.WriteFile(filepath.Join(root, "cgroup.subtree_control"), nil, 0o644)
			os.Mkdir(filepath.Join(root, "toolcage"), 0o755)
			os.WriteFile(filepath.Join(root, "toolcage/cgroup.controllers"), []byte(tt.controllers), 0o644)
			fs := &cgroupFS{mounts: []cgroupMount{{dir: root, root: "/", v2: true}}, own: map[string]string{"": "/"}}
			cs, err := newCgroupSet(fs, Config{CPUs: 0.25}, "sbx")
			if err != nil {
				t.Fatal(err)
			}
			defer cs.closeFiles()
			got, _ := os.ReadFile(filepath.Join(root, "toolcage/sbx/cpu.max"))
			if string(got) != tt.cpuMax || (cs.cpu != "") != (tt.cpuMax != "") {
				t.Fatalf("cpu.max %q, cpu group %q (%s); want %q", got, cs.cpu, cs.cpuNote, tt.cpuMax)
			}
			if tt.cpuMax == "" && cs.cpuNote == "" {
				t.Fatal("no quota and no note saying why")
			}
		})
	}
}

func TestCPUQuotaValue(t *testing.T) {
	for cpus, want := range map[float64]int64{1: 100000, 0.5: 50000, 2.5: 250000, 0.001: 1000} {
		if got := cpuQuota(cpus); got != want {
			t.Errorf("cpuQuota(%v) = %d, want %d", cpus, got, want)
		}
	}
}
