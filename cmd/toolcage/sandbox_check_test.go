package main

import (
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// These tests start real sandboxes around the real executor, as the daemon
// does; no daemon runs.

// needUserNS skips unless this machine can make user namespaces, which
// every sandbox needs.
func needUserNS(t *testing.T) {
	t.Helper()
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNS}
	if err := cmd.Run(); err != nil {
		t.Skip("no user namespaces here:", err)
	}
}

// sandboxConfig writes a daemon config naming the test's executor, with
// the given sandbox section (YAML, indented under "sandbox:").
func sandboxConfig(t *testing.T, sandboxYAML string) string {
	t.Helper()
	cfg := "executor:\n  path: " + executorPath + "\n"
	if sandboxYAML != "" {
		cfg += "sandbox:\n" + sandboxYAML
	}
	return writeFile(t, "toolcage.yaml", cfg)
}

// tableRow finds the row of protection in the human output and returns its
// status and detail.
func tableRow(t *testing.T, out, protection string) (status, detail string) {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(protection) + ` {2,}(\S+(?: \S+)?) {2,}(.*)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %q row in\n%s", protection, out)
	}
	return m[1], m[2]
}

func TestSandboxCheck(t *testing.T) {
	t.Parallel()
	needUserNS(t)
	r := runCLI(t, "", "sandbox", "check", "--config", sandboxConfig(t, ""))
	if r.code != exitOK || r.err != "" {
		t.Fatalf("sandbox check: %v", r)
	}
	if !regexp.MustCompile(`^PROTECTION +STATUS +DETAIL\n`).MatchString(r.out) {
		t.Errorf("no table header:\n%s", r.out)
	}
	for _, ns := range []string{"user", "pid", "mount", "network", "ipc", "uts", "cgroup"} {
		if st, _ := tableRow(t, r.out, ns+" namespace"); st != "active" {
			t.Errorf("%s namespace: %s\n%s", ns, st, r.out)
		}
	}
	if st, d := tableRow(t, r.out, "seccomp"); st != "active" || !strings.Contains(d, "required") {
		t.Errorf("seccomp: %s %s", st, d)
	}
	if st, _ := tableRow(t, r.out, "landlock"); !regexp.MustCompile(`^(ABI [1-9][0-9]*|missing)$`).MatchString(st) {
		t.Errorf("landlock: %s", st)
	}
	for _, p := range []string{"cgroup", "no_new_privs", "capabilities", "unprivileged mode"} {
		tableRow(t, r.out, p)
	}
	if st, _ := tableRow(t, r.out, "capabilities"); st != "dropped" {
		t.Errorf("capabilities: %s", st)
	}
	if !strings.Contains(r.out, "\nExecutor: "+executorPath+"\n") || !strings.Contains(r.out, "by sandbox.require: seccomp\n") ||
		!strings.Contains(r.out, "\nVerdict:  met") {
		t.Errorf("no executor, minimum or verdict:\n%s", r.out)
	}
	// Every row is aligned: the STATUS column starts at the same offset.
	lines := strings.Split(strings.SplitN(r.out, "\n\n", 2)[0], "\n")
	col := strings.Index(lines[0], "STATUS")
	for _, l := range lines[1:] {
		if len(l) <= col || l[col-1] != ' ' || l[col] == ' ' {
			t.Errorf("row not aligned at column %d: %q", col, l)
		}
	}
}

func TestSandboxCheckRequirementNotMet(t *testing.T) {
	t.Parallel()
	needUserNS(t)
	cfg := sandboxConfig(t, "  require:\n    landlock_abi: 99\n")
	r := runCLI(t, "", "sandbox", "check", "--config", cfg)
	wantExit(t, r, exitFailure, "Error: the sandbox does not meet the configured minimum: sandbox lacks Landlock ABI 99 (have ", "sandbox.require")
	if strings.Contains(r.err, "namespace") {
		t.Errorf("blames more than Landlock:\n%v", r)
	}
	// The table still shows what this machine gives, not a refused sandbox.
	if st, _ := tableRow(t, r.out, "user namespace"); st != "active" {
		t.Errorf("user namespace: %s\n%s", st, r.out)
	}
	if _, d := tableRow(t, r.out, "landlock"); !strings.Contains(d, "REQUIRED ABI 99 or later") {
		t.Errorf("landlock row: %s", d)
	}
	if !strings.Contains(r.out, "Verdict:  NOT met: sandbox lacks Landlock ABI 99") {
		t.Errorf("verdict:\n%s", r.out)
	}

	// The same as JSON: the answer on stdout, the verdict as the exit status.
	r = runCLI(t, "", "sandbox", "check", "--config", cfg, "--json")
	wantExit(t, r, exitFailure, "Landlock ABI 99")
	res := decodeStrict[sandboxCheckResult](t, r.out)
	if res.Met == nil || *res.Met || !strings.Contains(res.Missing, "Landlock ABI 99") || res.Require.LandlockABI != 99 ||
		res.Report == nil || !res.Report.UserNS {
		t.Errorf("json: %+v", res)
	}
}

func TestSandboxCheckJSON(t *testing.T) {
	t.Parallel()
	needUserNS(t)
	r := runCLI(t, "", "sandbox", "check", "--json", "--config", sandboxConfig(t, ""))
	if r.code != exitOK {
		t.Fatalf("sandbox check --json: %v", r)
	}
	res := decodeStrict[sandboxCheckResult](t, r.out)
	if !res.Enabled || res.Met == nil || !*res.Met || res.Missing != "" || res.Executor != executorPath || !res.Require.Seccomp {
		t.Errorf("json: %+v", res)
	}
	rep := res.Report
	if rep == nil || !rep.UserNS || !rep.PidNS || !rep.MountNS || !rep.NetNS || !rep.IPCNS || !rep.UTSNS ||
		!rep.Seccomp || !rep.NoNewPrivs || !rep.CapsDropped || rep.Cgroup == "" {
		t.Errorf("report: %+v", rep)
	}
	// The global --json works too.
	if r := runCLI(t, "", "--json", "sandbox", "check", "--config", sandboxConfig(t, "")); r.code != exitOK || !strings.HasPrefix(r.out, "{\n") {
		t.Errorf("global --json: %v", r)
	}
}

func TestSandboxCheckDisabled(t *testing.T) {
	t.Parallel()
	cfg := sandboxConfig(t, "  enabled: false\n  require: {landlock_abi: 99}\n")
	r := runCLI(t, "", "sandbox", "check", "--config", cfg)
	if r.code != exitOK || r.out != "sandbox: disabled by config (sandbox.enabled: false)\n" ||
		!strings.HasPrefix(r.err, "Warning: the sandbox is disabled") || strings.Count(r.err, "\n") != 1 {
		t.Errorf("disabled: %v", r)
	}
	r = runCLI(t, "", "sandbox", "check", "--config", cfg, "--json")
	res := decodeStrict[sandboxCheckResult](t, r.out)
	if r.code != exitOK || res.Enabled || res.Met != nil || res.Report != nil || !strings.HasPrefix(r.err, "Warning:") {
		t.Errorf("disabled json: %v", r)
	}
}

func TestSandboxCheckErrors(t *testing.T) {
	t.Parallel()
	wantExit(t, runCLI(t, "", "sandbox", "check", "--config", writeFile(t, "bad.yaml", "sandbox:\n  nope: 1\n")), exitUsage, "nope")
	wantExit(t, runCLI(t, "", "sandbox", "check", "--config", sandboxConfig(t, ""), "extra"), exitUsage, `unexpected argument "extra"`)
	wantExit(t, runCLI(t, "", "sandbox", "check", "--executor", "/nonexistent/toolcage-executor"), exitFailure, "executor binary")
}
