package shell

import (
	"context"
	"os/exec"
	"testing"

	"github.com/toolcage/toolcage/executors"
)

func benchmarkCall(b *testing.B, call *executors.ShellCall) {
	e := newTestExecutor(b)
	req := shellReq(call, executors.Limits{})
	ctx := context.Background()
	for b.Loop() {
		res, err := e.Execute(ctx, req)
		if err != nil || res.IsError {
			b.Fatalf("res %+v, err %v", res, err)
		}
	}
}

// BenchmarkShellArgv runs /bin/true directly, no shell.
func BenchmarkShellArgv(b *testing.B) { benchmarkCall(b, argv("/bin/true")) }

// BenchmarkShellSh runs true through sh -c.
func BenchmarkShellSh(b *testing.B) { benchmarkCall(b, sh("true")) }

// BenchmarkPlainExecCommand is the floor the two above are measured
// against: os/exec with no group, pipes, work dir or environment of ours.
func BenchmarkPlainExecCommand(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("sh", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}
