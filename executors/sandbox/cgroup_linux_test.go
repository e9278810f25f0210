package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCgroupParent makes a sandbox under a configured parent and finds
// its groups there, in every hierarchy it uses.
func TestCgroupParent(t *testing.T) {
	needRoot(t)
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
	needRoot(t)
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
