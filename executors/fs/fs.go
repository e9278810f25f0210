// Package fs is the filesystem executor: the file operations of the
// filesystem toolset (read_file, write_file, edit_file, list_files, glob,
// search, delete_file, file_info), confined to the workspace.
//
// Every path is opened through an os.Root on the workspace as the sandbox
// sees it (/workspace): "..", absolute paths and symlinks that lead out
// are refused on the path actually opened, component by component, by
// the kernel's openat beneath the root, never by comparing strings; a
// directory swapped for a symlink between a check and an open cannot lead
// out either, since there is no separate check. Behind that, the sandbox
// binds only the workspace (read-only unless the worker says otherwise)
// and Landlock allows nothing else.
//
// The result value is a JSON object per operation (see the op functions).
// A refused path or operation is an *errdefs.Error: policy_denied for an
// escape or a write to a read-only workspace, not_found, invalid_arguments
// (a bad path, range or expression, an edit whose text is not found
// exactly once), limit_exceeded (file_size) for a write over the cap.
package fs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path"
	"strings"
	"syscall"
	"time"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/toolspec"
)

// Defaults for caps a request leaves at zero.
const (
	DefaultMaxReadBytes  = 1 << 20
	DefaultMaxWriteBytes = 1 << 20
	DefaultMaxMatches    = 200
	DefaultTimeout       = 30 * time.Second
	// maxVisits bounds the entries one glob or search walks.
	maxVisits = 100_000
	// maxLineBytes bounds a line search returns.
	maxLineBytes = 512
)

// Executor runs file operations. It keeps no state between calls.
type Executor struct{}

// New returns an executor.
func New() *Executor { return &Executor{} }

// Execute runs one operation.
func (e *Executor) Execute(ctx context.Context, req *executors.Request) (*executors.Result, error) {
	start := time.Now()
	if req.FS == nil {
		return nil, errdefs.Errorf(errdefs.InvalidRequest, "fs executor: request has no fs call")
	}
	timeout := req.Limits.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := Run(ctx, req.FS)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, errdefs.LimitError(errdefs.LimitTimeout, "%s did not finish within %s", req.FS.Op, timeout)
		}
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if lim := req.Limits.OutputBytes; lim > 0 && int64(len(b)) > lim {
		return nil, errdefs.LimitError(errdefs.LimitOutput, "the result is %d bytes, over the output cap of %d; ask for less (a line range, a narrower path or pattern)", len(b), lim)
	}
	return &executors.Result{Value: b, OutputBytes: int64(len(b)), Duration: time.Since(start)}, nil
}

// Run runs one operation on the workspace at c.Root and returns its
// result value.
func Run(ctx context.Context, c *executors.FSCall) (any, error) {
	op := ops[c.Op]
	if op.run == nil {
		return nil, errdefs.Errorf(errdefs.InvalidRequest, "fs executor: unknown operation %q", c.Op)
	}
	if op.writes && c.ReadOnly {
		return nil, errdefs.Errorf(errdefs.PolicyDenied, "%s: the workspace is read-only (readonly: true in the worker file)", c.Op)
	}
	if c.Root == "" {
		return nil, errdefs.Errorf(errdefs.InvalidRequest, "fs executor: no workspace root")
	}
	root, err := os.OpenRoot(c.Root)
	if err != nil {
		return nil, errdefs.Errorf(errdefs.Unavailable, "the workspace is not available: %v", err)
	}
	defer root.Close()
	call := *c
	if call.MaxReadBytes <= 0 {
		call.MaxReadBytes = DefaultMaxReadBytes
	}
	if call.MaxWriteBytes <= 0 {
		call.MaxWriteBytes = DefaultMaxWriteBytes
	}
	if call.MaxMatches <= 0 {
		call.MaxMatches = DefaultMaxMatches
	}
	return op.run(ctx, root, &call)
}

type operation struct {
	writes bool
	run    func(ctx context.Context, root *os.Root, c *executors.FSCall) (any, error)
}

// ops are the operations by name; writes marks those a read-only
// workspace refuses.
var ops = map[string]operation{
	toolspec.FSReadFile:   {run: readFile},
	toolspec.FSWriteFile:  {writes: true, run: writeFile},
	toolspec.FSEditFile:   {writes: true, run: editFile},
	toolspec.FSDeleteFile: {writes: true, run: deleteFile},
	toolspec.FSListFiles:  {run: listFiles},
	toolspec.FSGlob:       {run: glob},
	toolspec.FSSearch:     {run: search},
	toolspec.FSFileInfo:   {run: fileInfo},
}

// relPath turns a path as the agent wrote it into one relative to the
// root: relative paths as they are, and absolute ones only under the
// root's own path (as shell tools see the workspace: /workspace/a). What
// it returns is still opened through the root, which refuses ".." and
// symlinks that lead out; this is only a spelling.
func relPath(p, rootPath string, allowRoot bool) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", errdefs.Errorf(errdefs.InvalidArguments, "path holds a NUL byte")
	}
	if p == "" {
		if allowRoot {
			return ".", nil
		}
		return "", errdefs.Errorf(errdefs.InvalidArguments, "path is empty")
	}
	if strings.HasPrefix(p, "/") {
		rest, ok := strings.CutPrefix(p, rootPath)
		if !ok || (rest != "" && !strings.HasPrefix(rest, "/")) {
			return "", errdefs.Errorf(errdefs.PolicyDenied, "path %q is outside the workspace; give a path relative to it", p)
		}
		p = strings.TrimPrefix(rest, "/")
		if p == "" {
			p = "."
		}
	}
	if p == "." && !allowRoot {
		return "", errdefs.Errorf(errdefs.InvalidArguments, "path names the workspace itself, not a file in it")
	}
	return p, nil
}

// pathError maps an error from the root to its code.
func pathError(op, p string, err error) error {
	var pe *os.PathError
	msg := err.Error()
	if errors.As(err, &pe) {
		msg = pe.Err.Error()
	}
	switch {
	case escapes(err):
		return errdefs.Errorf(errdefs.PolicyDenied, "%s %s: the path leads out of the workspace", op, p)
	case errors.Is(err, iofs.ErrNotExist):
		return errdefs.Errorf(errdefs.NotFound, "%s %s: no such file or directory", op, p)
	case errors.Is(err, syscall.EROFS):
		return errdefs.Errorf(errdefs.PolicyDenied, "%s %s: the workspace is mounted read-only", op, p)
	case errors.Is(err, iofs.ErrPermission):
		return errdefs.Errorf(errdefs.PolicyDenied, "%s %s: permission denied", op, p)
	case errors.Is(err, syscall.EISDIR):
		return errdefs.Errorf(errdefs.InvalidArguments, "%s %s: is a directory", op, p)
	case errors.Is(err, syscall.ENOTDIR):
		return errdefs.Errorf(errdefs.InvalidArguments, "%s %s: a component of the path is not a directory", op, p)
	}
	return errdefs.Errorf(errdefs.InvalidArguments, "%s %s: %s", op, p, msg)
}

// escapes reports the root's refusal of a path that leads out (its error
// is not exported: "path escapes from parent"), or a symlink loop.
func escapes(err error) bool {
	return strings.Contains(err.Error(), "escapes from parent") || errors.Is(err, syscall.ELOOP)
}

// cleanRel is p as the results show it: slash-separated, relative.
func cleanRel(p string) string {
	return path.Clean(strings.TrimPrefix(p, "./"))
}

func fmtMode(m iofs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&iofs.ModeSymlink != 0:
		return "symlink"
	case m.IsRegular():
		return "file"
	}
	return "other"
}

// checkCtx stops long walks when the call's time is up.
func checkCtx(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("stopped: %w", err)
	}
	return nil
}

// Interface guard.
var _ executors.Executor = (*Executor)(nil)
