package daemon

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
)

// TestSandboxHoldsWithoutDenyRules switches every deny-rule group off and
// runs real attacks as shell tools: the sandbox alone must stop each one,
// with the right error, while a well-behaved call runs beside it and the
// daemon stays up.
func TestSandboxHoldsWithoutDenyRules(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the full sandbox (cgroups) needs a root daemon")
	}
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "host-secret")
	if err := os.WriteFile(secret, []byte("s3cr3t"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()

	td := startDaemon(t, "", func(c *Config) {
		c.Shell.Rules.DisabledGroups = []string{"destructive_file_ops", "disk_destruction", "system_control",
			"fork_bombs", "remote_code_execution", "reverse_shells", "privilege_escalation",
			"environment_injection", "container_escape", "credential_and_env_dumping"}
		c.Sandbox.Memory = "128MiB"
		c.Sandbox.FileSize = "16MiB"
	})
	c := td.client
	dataDir, socket := td.cfg.DataDir, td.cfg.Socket
	attack := func(name, cmd string) {
		t.Helper()
		def := fmt.Sprintf(`{"name":%q,"description":"attack","kind":"shell","limits":{"timeout":"10s"},"shell":{"command":%q}}`, name, cmd)
		if err := c.Do(context.Background(), "POST", "/v1/tools", []byte(def), nil); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	attack("fork_bomb", `b() { b | b & }; b; sleep 3; echo survived`)
	attack("memory_bomb", `head -c 600000000 /dev/zero | tail -c 599999999 >/dev/null; echo done`)
	attack("big_file", `dd if=/dev/zero of=/tmp/big bs=1M count=10240 2>&1; ls -l /tmp/big`)
	attack("many_files", `i=0; while [ $i -lt 100000 ]; do exec 3</dev/null 4</dev/null 5</dev/null; i=$((i+1)); done; ulimit -n`)
	attack("kill_all", `kill -9 -1; sleep 1; echo after`)
	attack("do_mount", `mount -t tmpfs none /tmp`)
	attack("read_shadow", `cat /etc/shadow`)
	attack("read_data", "ls -la "+dataDir+" "+socket+" "+secret)
	if err := c.Do(context.Background(), "POST", "/v1/tools", []byte(`{"name":"cpu_spin","description":"spins","kind":"shell","limits":{"timeout":"500ms"},"shell":{"command":"while :; do :; done"}}`), nil); err != nil {
		t.Fatal(err)
	}
	attack("dial_host", fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/%d && echo connected`, ln.Addr().(*net.TCPAddr).Port))

	type want struct {
		code  errdefs.Code // error code, or "" for a result
		limit string
		check func(shellResult) bool
	}
	cases := map[string]want{
		"fork_bomb":   {code: errdefs.LimitExceeded, limit: errdefs.LimitPids},
		"cpu_spin":    {code: errdefs.Timeout, limit: errdefs.LimitTimeout},
		"memory_bomb": {code: errdefs.LimitExceeded, limit: errdefs.LimitMemory},
		// dd dies of SIGXFSZ at the 16 MiB file size limit; ls shows what is left.
		"big_file": {check: func(r shellResult) bool {
			return strings.Contains(r.Stdout, "File size limit exceeded") && strings.Contains(r.Stdout, "16777216")
		}},
		"many_files":  {check: func(r shellResult) bool { return strings.TrimSpace(r.Stdout) != "100000" }},
		"kill_all":    {code: errdefs.ExecutorFailed},
		"do_mount":    {check: func(r shellResult) bool { return r.ExitCode != 0 }},
		"read_shadow": {check: func(r shellResult) bool { return r.ExitCode != 0 && r.Stdout == "" }},
		"read_data":   {check: func(r shellResult) bool { return r.ExitCode != 0 && !strings.Contains(r.Stdout, "toolcage.db") }},
		"dial_host":   {check: func(r shellResult) bool { return !strings.Contains(r.Stdout, "connected") }},
	}
	for name, w := range cases {
		t.Run(name, func(t *testing.T) {
			var wg sync.WaitGroup
			var goodErr error
			var good api.CallResponse
			wg.Add(1)
			go func() {
				defer wg.Done()
				goodErr = c.Do(context.Background(), "POST", "/v1/js", api.JSRequest{Code: "let n = 0; for (let i = 0; i < 1e5; i++) n += i; return n"}, &good)
			}()
			r, err := callTool(c, name, nil)
			wg.Wait()
			if goodErr != nil || string(good.Result) != "4999950000" {
				t.Errorf("a well-behaved call beside %s: %v %s", name, goodErr, good.Result)
			}
			if w.code != "" {
				if codeOf(err) != w.code || (w.limit != "" && apiErr(t, err).Limit != w.limit) {
					t.Fatalf("%s: %v, want %s %s", name, err, w.code, w.limit)
				}
			} else {
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if out := shellOut(t, r); !w.check(out) {
					t.Fatalf("%s got through the sandbox: %+v", name, out)
				}
			}
			var h api.Health
			if err := c.Do(context.Background(), "GET", "/v1/health", nil, &h); err != nil {
				t.Fatalf("daemon after %s: %v", name, err)
			}
		})
	}
	time.Sleep(50 * time.Millisecond)
	accepted.Wait()
	// The audit log names the limit each bomb broke.
	var ex api.ExecutionList
	if err := c.Do(context.Background(), "GET", "/v1/executions?tool=fork_bomb", nil, &ex); err != nil || len(ex.Executions) != 1 || ex.Executions[0].Limit != "pids" {
		t.Fatalf("fork bomb audit: %v %+v", err, ex)
	}
}

// TestNothingCarriesOverBetweenCalls: a background process and a file a
// call leaves in /tmp are gone before the next call.
func TestNothingCarriesOverBetweenCalls(t *testing.T) {
	td := startDaemon(t, "", func(c *Config) { c.Executor.MaxPerKey = 1 })
	c := td.client
	create(t, c, `{"name":"leave","description":"leaves things","kind":"shell","shell":{"command":"sleep 1000 >/dev/null 2>&1 & echo x > /tmp/left; echo started"}}`)
	create(t, c, `{"name":"look","description":"looks","kind":"shell","shell":{"command":"ls /tmp; ps -o comm= 2>/dev/null || ls /proc"}}`)
	if _, err := callTool(c, "leave", nil); err != nil {
		t.Fatal(err)
	}
	r, err := callTool(c, "look", nil)
	if err != nil {
		t.Fatal(err)
	}
	out := shellOut(t, r)
	if strings.Contains(out.Stdout, "left") || strings.Contains(out.Stdout, "sleep") {
		t.Fatalf("the previous call's leftovers are visible:\n%s", out.Stdout)
	}
}
