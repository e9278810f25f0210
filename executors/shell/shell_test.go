package shell

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
)

// newTestExecutor returns an executor whose work dirs go under a test
// directory, with a short grace so stop tests stay quick.
func newTestExecutor(t testing.TB) *Executor {
	t.Helper()
	return New(Config{WorkRoot: t.TempDir(), Grace: 300 * time.Millisecond})
}

func shellReq(sc *executors.ShellCall, lim executors.Limits) *executors.Request {
	return &executors.Request{CallID: "c1", Tool: "t", Kind: executors.KindShell, Shell: sc, Limits: lim}
}

func decodeValue(t *testing.T, res *executors.Result) value {
	t.Helper()
	var v value
	if err := json.Unmarshal(res.Value, &v); err != nil {
		t.Fatalf("result value %s: %v", res.Value, err)
	}
	return v
}

func argv(a ...string) *executors.ShellCall { return &executors.ShellCall{Argv: a} }
func sh(c string) *executors.ShellCall      { return &executors.ShellCall{Command: c} }

func TestExecute(t *testing.T) {
	e := newTestExecutor(t)
	notExec := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(notExec, []byte("echo hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		call    *executors.ShellCall
		want    value
		isError bool
		errMsg  string // exact Result.Error
	}{
		{name: "argv", call: argv("echo", "hello", "world"), want: value{Stdout: "hello world\n"}},
		{name: "argv absolute path", call: argv("/bin/echo", "x"), want: value{Stdout: "x\n"}},
		{name: "sh -c", call: sh("echo one; echo two >&2"), want: value{Stdout: "one\n", Stderr: "two\n"}},
		{name: "sh -c pipeline", call: sh("printf 'b\\na\\n' | sort"), want: value{Stdout: "a\nb\n"}},
		{name: "command starting with a dash", call: sh("-x"), want: value{ExitCode: 127, Stderr: "sh: 1: -x: not found\n"},
			isError: true, errMsg: "exit status 127"},
		{name: "exit code", call: sh("echo partial; exit 3"), want: value{ExitCode: 3, Stdout: "partial\n"},
			isError: true, errMsg: "exit status 3"},
		{name: "argv exit code", call: argv("false"), want: value{ExitCode: 1}, isError: true, errMsg: "exit status 1"},
		{name: "killed by signal", call: sh("kill -KILL $$"), want: value{ExitCode: -1},
			isError: true, errMsg: "killed by signal SIGKILL"},
		{name: "argv command not found", call: argv("no-such-command-xyz", "a"),
			want:    value{ExitCode: 127, Stderr: "no-such-command-xyz: command not found\n"},
			isError: true, errMsg: "exit status 127: no-such-command-xyz: command not found"},
		{name: "argv missing path", call: argv("/no/such/file"),
			want:    value{ExitCode: 127, Stderr: "/no/such/file: no such file or directory\n"},
			isError: true, errMsg: "exit status 127: /no/such/file: no such file or directory"},
		{name: "argv not executable", call: argv(notExec),
			want:    value{ExitCode: 126, Stderr: notExec + ": permission denied\n"},
			isError: true, errMsg: "exit status 126: " + notExec + ": permission denied"},
		{name: "argv path through a file", call: argv(notExec + "/x"),
			want:    value{ExitCode: 126, Stderr: notExec + "/x: not a directory\n"},
			isError: true, errMsg: "exit status 126: " + notExec + "/x: not a directory"},
		{name: "sh command not found", call: sh("no-such-command-xyz"),
			want:    value{ExitCode: 127, Stderr: "sh: 1: no-such-command-xyz: not found\n"},
			isError: true, errMsg: "exit status 127"},
		{name: "stdin is /dev/null", call: argv("cat"), want: value{}},
		{name: "invalid UTF-8 replaced", call: sh(`printf 'a\377\376b\n'`), want: value{Stdout: "a\uFFFDb\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if strings.HasPrefix(tt.want.Stderr, "sh: 1:") && !isDash() {
				t.Skip("/bin/sh is not dash; its messages differ")
			}
			res, err := e.Execute(context.Background(), shellReq(tt.call, executors.Limits{}))
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			if got := decodeValue(t, res); got != tt.want {
				t.Errorf("value = %+v, want %+v", got, tt.want)
			}
			if res.IsError != tt.isError || res.Error != tt.errMsg {
				t.Errorf("IsError, Error = %v, %q; want %v, %q", res.IsError, res.Error, tt.isError, tt.errMsg)
			}
			if res.Duration <= 0 {
				t.Errorf("Duration = %v, want > 0", res.Duration)
			}
		})
	}
}

func isDash() bool {
	target, err := filepath.EvalSymlinks("/bin/sh")
	return err == nil && filepath.Base(target) == "dash"
}

func TestResultEncoding(t *testing.T) {
	e := newTestExecutor(t)
	res, err := e.Execute(context.Background(), shellReq(argv("printf", "a && <b>"), executors.Limits{}))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"exit_code":0,"stdout":"a && <b>","stderr":"","truncated":false}`
	if string(res.Value) != want {
		t.Errorf("Value = %s, want %s", res.Value, want)
	}
	if res.OutputBytes != int64(len("a && <b>")) {
		t.Errorf("OutputBytes = %d, want %d", res.OutputBytes, len("a && <b>"))
	}

	res, err = e.Execute(context.Background(), shellReq(sh("printf 12345; printf 678 >&2"), executors.Limits{}))
	if err != nil {
		t.Fatal(err)
	}
	if res.OutputBytes != 8 {
		t.Errorf("OutputBytes = %d, want 8 (stdout + stderr)", res.OutputBytes)
	}
}

func TestRequestRefused(t *testing.T) {
	e := newTestExecutor(t)
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		req  *executors.Request
		code errdefs.Code
	}{
		{"no shell call", &executors.Request{Kind: executors.KindShell}, errdefs.InvalidRequest},
		{"neither argv nor command", shellReq(&executors.ShellCall{}, executors.Limits{}), errdefs.InvalidArguments},
		{"both argv and command", shellReq(&executors.ShellCall{Argv: []string{"true"}, Command: "true"}, executors.Limits{}), errdefs.InvalidArguments},
		{"empty argv[0]", shellReq(argv("", "x"), executors.Limits{}), errdefs.InvalidArguments},
		{"NUL in argv", shellReq(argv("echo", "a\x00b"), executors.Limits{}), errdefs.InvalidArguments},
		{"NUL in command", shellReq(sh("echo a\x00b"), executors.Limits{}), errdefs.InvalidArguments},
		{"NUL in env value", shellReq(&executors.ShellCall{Argv: []string{"true"}, Env: map[string]string{"A": "x\x00"}}, executors.Limits{}), errdefs.InvalidArguments},
		{"dir missing", shellReq(&executors.ShellCall{Argv: []string{"true"}, Dir: "/no/such/dir"}, executors.Limits{}), errdefs.InvalidArguments},
		{"dir is a file", shellReq(&executors.ShellCall{Argv: []string{"true"}, Dir: file}, executors.Limits{}), errdefs.InvalidArguments},
		{"dir relative", shellReq(&executors.ShellCall{Argv: []string{"true"}, Dir: "tmp"}, executors.Limits{}), errdefs.InvalidArguments},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := e.Execute(context.Background(), tt.req)
			if got := errdefs.CodeOf(err); got != tt.code {
				t.Fatalf("code = %q (res %+v, err %v), want %q", got, res, err, tt.code)
			}
		})
	}
}

func TestRefusedEnvNames(t *testing.T) {
	e := newTestExecutor(t)
	canary := filepath.Join(t.TempDir(), "ran")
	refused := []string{
		"", "1A", "A-B", "A B", "A=B", "A.B", "É", "BASH_FUNC_f%%",
		"PATH", "HOME",
		"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "LD_DEBUG_OUTPUT", "DYLD_INSERT_LIBRARIES",
		"BASH_ENV", "ENV", "PROMPT_COMMAND", "IFS", "SHELLOPTS", "BASHOPTS", "PS4", "CDPATH",
		"GCONV_PATH", "NLSPATH", "PYTHONSTARTUP", "PERL5OPT", "NODE_OPTIONS",
	}
	for _, name := range refused {
		t.Run(name, func(t *testing.T) {
			call := &executors.ShellCall{
				Command: "touch " + canary,
				Env:     map[string]string{"OK_NAME": "1", name: "x"},
			}
			_, err := e.Execute(context.Background(), shellReq(call, executors.Limits{}))
			if got := errdefs.CodeOf(err); got != errdefs.PolicyDenied {
				t.Fatalf("code = %q (%v), want policy_denied", got, err)
			}
			if _, err := os.Stat(canary); err == nil {
				t.Fatal("the command ran")
			}
		})
	}
	for _, name := range []string{"A", "_", "a1", "LANG", "LC_ALL", "TOKEN", "MY_LD_PRELOAD", "ld_preload"} {
		t.Run("allowed "+name, func(t *testing.T) {
			call := &executors.ShellCall{Argv: []string{"true"}, Env: map[string]string{name: "x"}}
			if _, err := e.Execute(context.Background(), shellReq(call, executors.Limits{})); err != nil {
				t.Fatalf("Execute: %v", err)
			}
		})
	}
}

func TestEnvironmentIsolated(t *testing.T) {
	t.Setenv("TOOLCAGE_TEST_CANARY", "leaked")
	t.Setenv("PATH", "/tmp/evil:"+os.Getenv("PATH"))
	e := newTestExecutor(t)
	dir := t.TempDir()
	tests := []struct {
		name string
		call *executors.ShellCall
		want []string
	}{
		{
			name: "argv",
			call: &executors.ShellCall{Argv: []string{"env"}, Dir: dir, Env: map[string]string{"TOKEN": "s3cret", "EMPTY": ""}},
			want: []string{"EMPTY=", "HOME=" + dir, "LANG=C.UTF-8", "PATH=" + fixedPath, "TOKEN=s3cret"},
		},
		{
			name: "LANG overridden",
			call: &executors.ShellCall{Argv: []string{"env"}, Dir: dir, Env: map[string]string{"LANG": "C"}},
			want: []string{"HOME=" + dir, "LANG=C", "PATH=" + fixedPath},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := e.Execute(context.Background(), shellReq(tt.call, executors.Limits{}))
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Split(strings.TrimSpace(decodeValue(t, res).Stdout), "\n")
			sort.Strings(got)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("env =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}

	// Through the shell too: the canary is not there, and the variable the
	// call set is.
	res, err := e.Execute(context.Background(), shellReq(&executors.ShellCall{
		Command: `echo "canary=${TOOLCAGE_TEST_CANARY-unset} token=$TOKEN path=$PATH"`,
		Env:     map[string]string{"TOKEN": "t"},
	}, executors.Limits{}))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := decodeValue(t, res).Stdout, "canary=unset token=t path="+fixedPath+"\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
}

func TestWorkDir(t *testing.T) {
	root := t.TempDir()
	e := New(Config{WorkRoot: root})

	t.Run("given dir", func(t *testing.T) {
		dir := t.TempDir()
		res, err := e.Execute(context.Background(), shellReq(&executors.ShellCall{
			Command: `pwd; echo "$HOME"; echo data > out.txt`, Dir: dir,
		}, executors.Limits{}))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := decodeValue(t, res).Stdout, dir+"\n"+dir+"\n"; got != want {
			t.Errorf("stdout = %q, want %q", got, want)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "out.txt")); err != nil || string(b) != "data\n" {
			t.Errorf("file left in the given dir: %q, %v", b, err)
		}
	})

	t.Run("fresh private dir", func(t *testing.T) {
		// The command leaves behind a directory nobody may enter, to prove
		// cleanup copes.
		res, err := e.Execute(context.Background(), shellReq(sh(
			`pwd; echo "$HOME"; stat -c %a .; mkdir -p locked/inner && touch locked/inner/f && chmod 000 locked/inner locked`,
		), executors.Limits{}))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(decodeValue(t, res).Stdout), "\n")
		if len(lines) != 3 {
			t.Fatalf("stdout lines = %q", lines)
		}
		wd := lines[0]
		if filepath.Dir(wd) != root {
			t.Errorf("work dir %q is not under WorkRoot %q", wd, root)
		}
		if lines[1] != wd {
			t.Errorf("HOME = %q, want the work dir %q", lines[1], wd)
		}
		if lines[2] != "700" {
			t.Errorf("work dir mode = %s, want 700", lines[2])
		}
		if _, err := os.Stat(wd); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("work dir still there after the call: %v", err)
		}
		if left, _ := os.ReadDir(root); len(left) != 0 {
			t.Errorf("WorkRoot not empty: %v", left)
		}
	})

	t.Run("relative argv[0] resolves in the dir", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "tool.sh"), []byte("#!/bin/sh\necho from tool\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		res, err := e.Execute(context.Background(), shellReq(&executors.ShellCall{Argv: []string{"./tool.sh"}, Dir: dir}, executors.Limits{}))
		if err != nil {
			t.Fatal(err)
		}
		if got := decodeValue(t, res).Stdout; got != "from tool\n" {
			t.Errorf("stdout = %q", got)
		}
	})
}

func TestArgvLiteral(t *testing.T) {
	e := newTestExecutor(t)
	dir := t.TempDir()
	args := []string{
		"a b", "'single'", `"double"`, "$(touch canary1)", "`touch canary2`",
		"; touch canary3", "&& touch canary4", "| touch canary5", "$HOME", "*", "\\n", "",
	}
	res, err := e.Execute(context.Background(), shellReq(&executors.ShellCall{
		Argv: append([]string{"printf", "[%s]\n"}, args...), Dir: dir,
	}, executors.Limits{}))
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, a := range args {
		want.WriteString("[" + a + "]\n")
	}
	if got := decodeValue(t, res).Stdout; got != want.String() {
		t.Errorf("stdout =\n%s\nwant\n%s", got, want.String())
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("an argument was run by a shell: dir holds %v", left)
	}
}

func TestTimeout(t *testing.T) {
	// Generous: the bound proves the limit stopped the command (sleep 2 or
	// sleep 10 otherwise), not how fast a loaded machine schedules it.
	const slack = 1200 * time.Millisecond
	e := newTestExecutor(t) // Grace 300ms
	tests := []struct {
		name     string
		call     *executors.ShellCall
		timeout  time.Duration
		min, max time.Duration
	}{
		{name: "sleep stops at SIGTERM", call: sh("sleep 2"), timeout: 200 * time.Millisecond,
			min: 200 * time.Millisecond, max: 200*time.Millisecond + slack},
		{name: "argv sleep", call: argv("sleep", "2"), timeout: 200 * time.Millisecond,
			min: 200 * time.Millisecond, max: 200*time.Millisecond + slack},
		{name: "SIGTERM ignored needs SIGKILL", call: sh("trap '' TERM; sleep 10"), timeout: 200 * time.Millisecond,
			min: 500 * time.Millisecond, max: 500*time.Millisecond + slack},
		{name: "pipeline in the group", call: sh("sleep 10 | sleep 10; echo after"), timeout: 200 * time.Millisecond,
			min: 200 * time.Millisecond, max: 200*time.Millisecond + slack},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			res, err := e.Execute(context.Background(), shellReq(tt.call, executors.Limits{Timeout: tt.timeout}))
			took := time.Since(start)
			if errdefs.CodeOf(err) != errdefs.Timeout || errdefs.LimitOf(err) != errdefs.LimitTimeout {
				t.Fatalf("res %+v, err %v; want a timeout error", res, err)
			}
			if took < tt.min || took > tt.max {
				t.Errorf("took %v, want between %v and %v", took, tt.min, tt.max)
			}
		})
	}

	t.Run("just inside the timeout", func(t *testing.T) {
		res, err := e.Execute(context.Background(), shellReq(sh("sleep 0.1; echo done"), executors.Limits{Timeout: time.Second}))
		if err != nil {
			t.Fatal(err)
		}
		if got := decodeValue(t, res).Stdout; got != "done\n" {
			t.Errorf("stdout = %q", got)
		}
	})

	t.Run("default timeout from config", func(t *testing.T) {
		e := New(Config{WorkRoot: t.TempDir(), Timeout: 150 * time.Millisecond, Grace: 100 * time.Millisecond})
		_, err := e.Execute(context.Background(), shellReq(sh("sleep 5"), executors.Limits{}))
		if errdefs.CodeOf(err) != errdefs.Timeout {
			t.Fatalf("err = %v, want timeout", err)
		}
	})
}

func TestContextEnds(t *testing.T) {
	e := newTestExecutor(t)
	tests := []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		code errdefs.Code
	}{
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 150*time.Millisecond)
		}, errdefs.Timeout},
		{"cancel", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(150*time.Millisecond, cancel)
			return ctx, cancel
		}, errdefs.Unavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Timed from before the context is made: its 150ms start
			// then, not when Execute is called.
			start := time.Now()
			ctx, cancel := tt.ctx()
			defer cancel()
			_, err := e.Execute(ctx, shellReq(sh("trap '' TERM; sleep 10"), executors.Limits{}))
			took := time.Since(start)
			if got := errdefs.CodeOf(err); got != tt.code {
				t.Fatalf("err = %v (code %q), want %q", err, got, tt.code)
			}
			// 150ms, then the 300ms grace, then SIGKILL.
			if took < 450*time.Millisecond || took > 4*time.Second {
				t.Errorf("took %v, want about 450ms", took)
			}
		})
	}

	t.Run("already done", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		dir := t.TempDir()
		_, err := e.Execute(ctx, shellReq(&executors.ShellCall{Command: "touch ran", Dir: dir}, executors.Limits{}))
		if errdefs.CodeOf(err) != errdefs.Unavailable {
			t.Fatalf("err = %v", err)
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Error("the command ran")
		}
	})
}

func TestOutputCap(t *testing.T) {
	e := newTestExecutor(t)
	const limit = 100_000 // more than one pipe buffer, not a multiple of a read
	tests := []struct {
		name    string
		call    *executors.ShellCall
		wantErr string // "" for success
		out     int    // bytes expected on the capped stream when it succeeds
	}{
		{name: "stdout at cap", call: argv("head", "-c", strconv.Itoa(limit), "/dev/zero"), out: limit},
		{name: "stdout over cap", call: argv("head", "-c", strconv.Itoa(limit+1), "/dev/zero"),
			wantErr: "shell: stdout exceeded 100000 bytes"},
		{name: "stderr at cap", call: sh("head -c " + strconv.Itoa(limit) + " /dev/zero >&2"), out: limit},
		{name: "stderr over cap", call: sh("head -c " + strconv.Itoa(limit+1) + " /dev/zero >&2"),
			wantErr: "shell: stderr exceeded 100000 bytes"},
		{name: "both streams at cap", call: sh("head -c 100000 /dev/zero; head -c 100000 /dev/zero >&2"), out: limit},
		{name: "over cap then exit 0 slowly", call: sh("head -c 100001 /dev/zero; sleep 10"),
			wantErr: "shell: stdout exceeded 100000 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			res, err := e.Execute(context.Background(), shellReq(tt.call, executors.Limits{OutputBytes: limit}))
			took := time.Since(start)
			if tt.wantErr != "" {
				if errdefs.CodeOf(err) != errdefs.LimitExceeded || errdefs.LimitOf(err) != errdefs.LimitOutput {
					t.Fatalf("res %+v, err %v; want an output limit error", res, err)
				}
				if err.Error() != tt.wantErr {
					t.Errorf("err = %q, want %q", err, tt.wantErr)
				}
				if took > 3*time.Second {
					t.Errorf("took %v to stop", took)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			v := decodeValue(t, res)
			if len(v.Stdout) != tt.out && len(v.Stderr) != tt.out {
				t.Errorf("got %d stdout, %d stderr bytes; want %d on the capped stream", len(v.Stdout), len(v.Stderr), tt.out)
			}
		})
	}

	t.Run("yes stops quickly", func(t *testing.T) {
		e := New(Config{WorkRoot: t.TempDir()}) // default 1 MiB cap
		start := time.Now()
		_, err := e.Execute(context.Background(), shellReq(argv("yes"), executors.Limits{}))
		took := time.Since(start)
		if errdefs.LimitOf(err) != errdefs.LimitOutput {
			t.Fatalf("err = %v, want output limit", err)
		}
		if got, want := err.Error(), "shell: stdout exceeded 1048576 bytes"; got != want {
			t.Errorf("err = %q, want %q", got, want)
		}
		if took > 3*time.Second {
			t.Errorf("took %v", took)
		}
	})

	t.Run("yes ignoring SIGTERM", func(t *testing.T) {
		start := time.Now()
		_, err := e.Execute(context.Background(), shellReq(sh("trap '' TERM; yes >&2"), executors.Limits{OutputBytes: limit}))
		if errdefs.LimitOf(err) != errdefs.LimitOutput {
			t.Fatalf("err = %v, want output limit", err)
		}
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("took %v", took)
		}
	})
}

// gone reports whether pid no longer runs: it does not exist, or it is a
// zombie waiting for its new parent to reap it.
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == syscall.ESRCH
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] == 'Z'
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for !gone(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("pid %d still runs after the call", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestLeftoversKilled(t *testing.T) {
	e := newTestExecutor(t)
	tests := []struct {
		name    string
		command string
	}{
		// The background job holds stdout open: the call must not wait
		// for it, and it must not survive.
		{"background job holding the pipe", "sleep 1000 & p=$!"},
		{"background job with pipes closed", "sleep 1000 >/dev/null 2>&1 & p=$!"},
		{"grandchild of a subshell", "(sleep 1000 & echo $! > pid); p=$(cat pid)"},
		{"nohup", "nohup sleep 1000 >/dev/null 2>&1 & p=$!"},
	}
	if _, err := os.Stat("/proc/self/comm"); err != nil {
		t.Skip("no /proc")
	}
	// Each command waits until its job really runs sleep, so that the job
	// cannot die early by being caught half-started, then prints its pid.
	const settle = `; while [ "$(cat /proc/$p/comm 2>/dev/null)" != sleep ]; do sleep 0.01; done; echo $p`
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			res, err := e.Execute(context.Background(), shellReq(sh(tt.command+settle), executors.Limits{Timeout: 5 * time.Second}))
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("took %v", took)
			}
			v := decodeValue(t, res)
			pid, err := strconv.Atoi(strings.TrimSpace(v.Stdout))
			if err != nil {
				t.Fatalf("stdout %q: %v", v.Stdout, err)
			}
			if v.Truncated || res.IsError {
				t.Errorf("value %+v, IsError %v", v, res.IsError)
			}
			waitGone(t, pid)
		})
	}

	t.Run("after a timeout", func(t *testing.T) {
		dir := t.TempDir()
		_, err := e.Execute(context.Background(), shellReq(&executors.ShellCall{
			Command: "trap '' TERM; sleep 1000 & p=$!" + settle + " > pid; wait", Dir: dir,
		}, executors.Limits{Timeout: 200 * time.Millisecond}))
		if errdefs.CodeOf(err) != errdefs.Timeout {
			t.Fatalf("err = %v", err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "pid"))
		if err != nil {
			t.Fatal(err)
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		waitGone(t, pid)
	})
}

func TestEscapedPipeHolder(t *testing.T) {
	if _, err := lookPath("setsid", "/"); err != nil {
		t.Skip("no setsid")
	}
	e := newTestExecutor(t)
	dir := t.TempDir()
	start := time.Now()
	// The escaped process leaves the group (and the session) and keeps
	// stdout open; the call must come back anyway, after drainWait.
	res, err := e.Execute(context.Background(), shellReq(&executors.ShellCall{
		Command: `setsid sh -c 'echo $$ > pid.tmp && mv pid.tmp pid; exec sleep 1000' &
			while [ ! -e pid ]; do sleep 0.01; done; echo out`,
		Dir: dir,
	}, executors.Limits{Timeout: 5 * time.Second}))
	took := time.Since(start)
	t.Cleanup(func() {
		if b, err := os.ReadFile(filepath.Join(dir, "pid")); err == nil {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			if pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	v := decodeValue(t, res)
	if v.Stdout != "out\n" || !v.Truncated || !res.Truncated {
		t.Errorf("value %+v, Result.Truncated %v; want stdout kept and truncated set", v, res.Truncated)
	}
	if took > drainWait+time.Second {
		t.Errorf("took %v", took)
	}
}

func TestConcurrentCalls(t *testing.T) {
	e := newTestExecutor(t)
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			res, err := e.Execute(context.Background(), shellReq(argv("echo", strconv.Itoa(i)), executors.Limits{}))
			if err == nil {
				var v value
				_ = json.Unmarshal(res.Value, &v)
				if v.Stdout != strconv.Itoa(i)+"\n" {
					err = errors.New("call " + strconv.Itoa(i) + " got " + v.Stdout)
				}
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
