// Package shell is the shell executor. It runs a rendered shell tool call as
// a child process: an argv directly (no shell involved) when the template
// was one simple command, otherwise the command text through "sh -c".
//
// The child sees nothing of the executor: its environment is built only
// from the call's variables plus PATH, HOME and LANG (env.go), stdin is
// /dev/null, and it works in the call's directory or in a fresh private
// directory that is removed afterwards. It runs in its own process group,
// so a timeout, a cancelled ctx or a broken output cap stops everything it
// started, and whatever it left running in the background is killed when
// it exits (run.go says how and how precisely).
//
// The result value is the JSON object
//
//	{"exit_code": 0, "stdout": "...", "stderr": "...", "truncated": false}
//
// stdout and stderr are strings: every run of bytes that is not valid UTF-8
// is replaced by one U+FFFD, so binary output does not survive. truncated
// is set when a stream was cut off before its end because a process that
// escaped the process group (setsid, a daemonising tool) kept it open after
// the command exited; the output up to that point is kept.
//
// A command that exits non-zero, is killed by a signal or cannot be found
// is a tool-level failure: the Result has IsError set and Value still
// holds what it printed. Breaking a limit is an *errdefs.Error instead.
package shell

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
)

// Defaults used when Config and the request leave a value at zero.
const (
	DefaultTimeout     = 60 * time.Second
	DefaultOutputBytes = 1 << 20
	DefaultGrace       = 3 * time.Second
	DefaultShell       = "/bin/sh"
)

// fixedPath is the PATH every command runs with and argv[0] is looked up
// in. The executor's own PATH is never used.
const fixedPath = "/usr/local/bin:/usr/bin:/bin"

// Config holds the executor's defaults. A request's non-zero limits
// override Timeout and OutputBytes.
type Config struct {
	// Timeout bounds a call's wall time. Zero means DefaultTimeout.
	Timeout time.Duration
	// OutputBytes caps stdout and stderr, each on its own. Zero means
	// DefaultOutputBytes.
	OutputBytes int64
	// Grace is how long a process group told to stop (SIGTERM) has before
	// it is killed (SIGKILL). Zero means DefaultGrace.
	Grace time.Duration
	// Shell runs Command calls as Shell -c Command. A name without a slash
	// is looked up in the fixed PATH. Empty means DefaultShell.
	Shell string
	// WorkRoot is where per-call work directories are made for calls that
	// name no directory. Empty means os.TempDir().
	WorkRoot string
}

// Executor runs shell tool calls. It keeps no state between calls, so
// calls may run concurrently.
type Executor struct {
	cfg Config
}

// New returns an executor with cfg's defaults filled in. It starts nothing
// and touches no files.
func New(cfg Config) *Executor {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.OutputBytes <= 0 {
		cfg.OutputBytes = DefaultOutputBytes
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.Shell == "" {
		cfg.Shell = DefaultShell
	}
	return &Executor{cfg: cfg}
}

// value is the shape of Result.Value.
type value struct {
	ExitCode  int    `json:"exit_code"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	Truncated bool   `json:"truncated"`
}

// Execute runs req.Shell.
//
// Exactly one of Argv and Command must be set (invalid_arguments
// otherwise); environment names that are malformed or dangerous are
// refused with policy_denied; a Dir that is not an absolute path to an
// existing directory is invalid_arguments. A timeout or a ctx deadline is
// a timeout error, a cancelled ctx an unavailable error, more output than
// the cap on either stream a limit_exceeded error naming the output limit.
// Result.OutputBytes counts the bytes read from stdout and stderr.
func (e *Executor) Execute(ctx context.Context, req *executors.Request) (*executors.Result, error) {
	if req == nil || req.Shell == nil {
		return nil, errdefs.Errorf(errdefs.InvalidRequest, "shell: request carries no shell call")
	}
	call := req.Shell
	if err := checkCall(call); err != nil {
		return nil, err
	}
	if err := checkEnv(call.Env); err != nil {
		return nil, err
	}
	if call.Dir != "" {
		if err := checkDir(call.Dir); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, stopError(err)
	}

	start := time.Now()
	dir := call.Dir
	if dir == "" {
		d, err := e.makeWorkDir()
		if err != nil {
			return nil, err
		}
		defer removeWorkDir(d)
		dir = d
	}

	p, err := e.program(call, dir)
	var out *outcome
	if err == nil {
		p.env, p.dir = buildEnv(call.Env, dir), dir
		out, err = e.run(ctx, p, e.limits(req.Limits))
	}
	var res *executors.Result
	var sf *startFailure
	switch {
	case errors.As(err, &sf):
		res, err = notRunnable(sf.name, sf.err)
	case err != nil:
		return nil, err
	default:
		res, err = out.result()
	}
	if err != nil {
		return nil, err
	}
	res.Duration = time.Since(start)
	return res, nil
}

// limits resolves a request's limits against the executor's defaults.
func (e *Executor) limits(l executors.Limits) executors.Limits {
	if l.Timeout <= 0 {
		l.Timeout = e.cfg.Timeout
	}
	if l.OutputBytes <= 0 {
		l.OutputBytes = e.cfg.OutputBytes
	}
	return l
}

// program resolves what to execute in dir. An argv program that cannot
// be found is the tool's failure, a *startFailure; a missing shell is the
// executor's.
func (e *Executor) program(call *executors.ShellCall, dir string) (*program, error) {
	if len(call.Argv) > 0 {
		path, err := lookPath(call.Argv[0], dir)
		if err != nil {
			return nil, &startFailure{name: call.Argv[0], err: err}
		}
		return &program{path: path, argv: call.Argv}, nil
	}
	path, err := lookPath(e.cfg.Shell, "/")
	if err != nil {
		return nil, errdefs.Errorf(errdefs.ExecutorFailed, "shell: shell %q: %v", e.cfg.Shell, err)
	}
	// "--" keeps a command that starts with "-" from being read as options.
	argv := []string{filepath.Base(e.cfg.Shell), "-c", "--", call.Command}
	return &program{path: path, argv: argv, viaShell: true}, nil
}

// notRunnable turns a failure to find or start a program into the result a
// shell would give: 127 for a missing program, 126 for one that exists but
// cannot be executed. Anything else is the executor's failure.
func notRunnable(name string, err error) (*executors.Result, error) {
	code := 0
	switch {
	case errors.Is(err, fs.ErrNotExist):
		code = 127
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM),
		errors.Is(err, syscall.ENOEXEC), errors.Is(err, syscall.EISDIR),
		errors.Is(err, syscall.ENOTDIR):
		code = 126
	case errors.Is(err, syscall.E2BIG):
		return nil, errdefs.Errorf(errdefs.InvalidArguments, "shell: argument list and environment too long")
	default:
		return nil, errdefs.Errorf(errdefs.ExecutorFailed, "shell: start %s: %v", name, err)
	}
	// The message also goes to stderr, where a shell would have put it.
	msg := name + ": " + describeStartError(err)
	raw, jerr := marshalValue(value{ExitCode: code, Stderr: msg + "\n"})
	if jerr != nil {
		return nil, jerr
	}
	return &executors.Result{
		Value:       raw,
		IsError:     true,
		Error:       "exit status " + strconv.Itoa(code) + ": " + msg,
		OutputBytes: int64(len(msg) + 1),
	}, nil
}

// describeStartError is the short reason in a not-runnable message.
func describeStartError(err error) string {
	switch {
	case errors.Is(err, errCommandNotFound):
		return "command not found"
	case errors.Is(err, fs.ErrNotExist):
		return "no such file or directory"
	case errors.Is(err, syscall.ENOEXEC):
		return "exec format error"
	case errors.Is(err, syscall.EISDIR):
		return "is a directory"
	case errors.Is(err, syscall.ENOTDIR):
		return "not a directory"
	}
	return "permission denied"
}

// result turns a finished run into the call's Result.
func (o *outcome) result() (*executors.Result, error) {
	v := value{
		ExitCode:  o.exitCode,
		Stdout:    strings.ToValidUTF8(string(o.stdout.buf), "\uFFFD"),
		Stderr:    strings.ToValidUTF8(string(o.stderr.buf), "\uFFFD"),
		Truncated: o.stdout.cut || o.stderr.cut,
	}
	raw, err := marshalValue(v)
	if err != nil {
		return nil, err
	}
	res := &executors.Result{
		Value:       raw,
		OutputBytes: o.stdout.n + o.stderr.n,
		Truncated:   v.Truncated,
	}
	switch {
	case o.signal != "":
		res.IsError = true
		res.Error = "killed by signal " + o.signal
	case o.exitCode != 0:
		res.IsError = true
		res.Error = "exit status " + strconv.Itoa(o.exitCode)
	}
	return res, nil
}

// marshalValue encodes v without HTML escaping, so "a && b" stays readable.
func marshalValue(v value) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, errdefs.Errorf(errdefs.Internal, "shell: encode result: %v", err)
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// stopError maps a ctx error to the error a stopped call returns.
func stopError(err error) *errdefs.Error {
	if errors.Is(err, context.DeadlineExceeded) {
		return errdefs.LimitError(errdefs.LimitTimeout, "shell: call stopped: %w", err)
	}
	return errdefs.Errorf(errdefs.Unavailable, "shell: call stopped: %w", err)
}

// makeWorkDir makes a fresh private directory for one call.
func (e *Executor) makeWorkDir() (string, error) {
	root := e.cfg.WorkRoot
	if root == "" {
		root = os.TempDir()
	}
	d, err := os.MkdirTemp(root, "toolcage-shell-")
	if err != nil {
		return "", errdefs.Errorf(errdefs.ExecutorFailed, "shell: make work dir: %v", err)
	}
	// MkdirTemp already asks for 0700; say so explicitly in case that
	// ever changes.
	if err := os.Chmod(d, 0o700); err != nil {
		_ = os.RemoveAll(d)
		return "", errdefs.Errorf(errdefs.ExecutorFailed, "shell: make work dir: %v", err)
	}
	return d, nil
}

// removeWorkDir removes a call's work directory. A command may have left
// directories it cannot be listed or emptied, so a failed first attempt
// makes every directory accessible and tries again. Removal is best
// effort: a process that escaped the group may still be writing there.
func removeWorkDir(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

// Interface guards.
var _ executors.Executor = (*Executor)(nil)
