// Package fs is the daemon's side of the filesystem toolset's tools: the
// fs: block (which file operation, the workspace's read-only flag, the
// caps) and the request of one call, built from the fixed arguments
// (path, content, find, replace, pattern, start_line, end_line). The
// operation runs in the fs executor, confined to the workspace
// (executors/fs). The kind is toolset only: no definition outside the
// filesystem toolset may name it.
package fs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/policy"
	"github.com/toolcage/toolcage/policy/mounts"
	"github.com/toolcage/toolcage/policy/repocode"
	"github.com/toolcage/toolcage/toolspec"
)

// Kind is the fs kind.
type Kind struct{}

// Name is "fs".
func (Kind) Name() toolspec.Kind { return toolspec.FS }

// ToolsetOnly: only the filesystem toolset writes fs tools.
func (Kind) Toolset() string { return "filesystem" }

// Decode reads an fs: block.
func (Kind) Decode(raw json.RawMessage) (kind.Spec, error) { return kind.DecodeSpec[Spec](raw) }

// Required is the problem of an fs tool with no block.
func (Kind) Required() kind.Problem { return kind.Problem{Field: "fs.op", Message: "is required"} }

// ResetAfterCall is false: an operation starts no process and leaves
// nothing in the sandbox (what it writes is in the workspace, on purpose).
func (Kind) ResetAfterCall() bool { return false }

// Ops lists the operations, in the order the toolset lists its tools.
var Ops = []string{
	toolspec.FSReadFile, toolspec.FSWriteFile, toolspec.FSEditFile, toolspec.FSListFiles,
	toolspec.FSGlob, toolspec.FSSearch, toolspec.FSDeleteFile, toolspec.FSFileInfo,
}

// Spec is the body of an fs tool.
type Spec struct {
	Op       string `json:"op"`
	ReadOnly bool   `json:"readonly,omitempty"`
	// Caps, 0 for the executor's defaults.
	MaxReadBytes  int64 `json:"max_read_bytes,omitempty"`
	MaxWriteBytes int64 `json:"max_write_bytes,omitempty"`
	MaxMatches    int   `json:"max_matches,omitempty"`
}

// Normalize does nothing: the block has no defaults to fill.
func (s *Spec) Normalize() {}

// Validate checks the operation and the caps.
func (s *Spec) Validate(kind.Tool) []kind.Problem {
	var ps []kind.Problem
	if !slices.Contains(Ops, s.Op) {
		ps = append(ps, kind.Problem{Field: "fs.op", Message: fmt.Sprintf("unknown operation %q", s.Op)})
	}
	if s.MaxReadBytes < 0 || s.MaxWriteBytes < 0 || s.MaxMatches < 0 {
		ps = append(ps, kind.Problem{Field: "fs", Message: "caps must not be negative"})
	}
	return ps
}

// Effects follow the operation: reads change nothing; write_file and
// edit_file change what exists and delete_file removes it. The
// filesystem permission is the workspace the operation works on.
func (s *Spec) Effects() kind.Effects {
	e := kind.Effects{Holds: []string{"filesystem"}}
	switch s.Op {
	case toolspec.FSReadFile, toolspec.FSListFiles, toolspec.FSGlob, toolspec.FSSearch, toolspec.FSFileInfo:
		e.ReadOnly = true
	default:
		e.Destructive = true
	}
	return e
}

// Check has nothing to add to Validate.
func (s *Spec) Check(kind.Tool) error { return nil }

// Compile has nothing to compile.
func (s *Spec) Compile(kind.Tool) (kind.Compiled, error) { return &Compiled{spec: s}, nil }

// Compiled is an fs block ready for calls.
type Compiled struct{ spec *Spec }

// Secrets: an fs tool uses none.
func (c *Compiled) Secrets(kind.Tool) ([]string, bool) { return nil, false }

// args are the fixed argument names of the filesystem tools.
type args struct {
	Path      string `json:"path"`
	Content   string `json:"content"`
	Find      string `json:"find"`
	Replace   string `json:"replace"`
	Pattern   string `json:"pattern"`
	StartLine int64  `json:"start_line"`
	EndLine   int64  `json:"end_line"`
}

// Build makes the operation's request; the executor opens every path
// beneath the workspace.
func (c *Compiled) Build(_ context.Context, call *kind.Call, req *kind.Request) (*kind.Built, error) {
	var a args
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return nil, &errdefs.Error{Code: errdefs.InvalidArguments, Err: errors.New("arguments: " + err.Error())}
	}
	s := c.spec
	// The workspace is only bound for the filesystem permission.
	if !slices.Contains(req.Permissions, "filesystem") {
		req.Permissions = append(slices.Clone(req.Permissions), "filesystem")
	}
	req.FS = &toolspec.FSCall{
		Op: s.Op, Root: mounts.Workspace, ReadOnly: s.ReadOnly,
		Path: a.Path, Content: a.Content, Find: a.Find, Replace: a.Replace, Pattern: a.Pattern,
		StartLine: a.StartLine, EndLine: a.EndLine,
		MaxReadBytes: s.MaxReadBytes, MaxWriteBytes: s.MaxWriteBytes, MaxMatches: s.MaxMatches,
	}
	return &kind.Built{}, nil
}

// CallApproval holds a write, edit or delete of a file git, make, npm
// or an editor runs programs from (repocode.File: .git/..., a Makefile,
// package.json...) for a person, whatever the worker pre-approves: such
// a file is code. The path is read as the agent wrote it and as it
// resolves in the workspace (a symlink to .git/config is .git/config).
func (c *Compiled) CallApproval(call *kind.Call) (string, error) {
	switch c.spec.Op {
	case toolspec.FSWriteFile, toolspec.FSEditFile, toolspec.FSDeleteFile:
	default:
		return policy.ApprovalPreApproved, nil
	}
	var a args
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return "", &errdefs.Error{Code: errdefs.InvalidArguments, Err: errors.New("arguments: " + err.Error())}
	}
	p := strings.TrimPrefix(path.Clean("/"+strings.TrimPrefix(a.Path, mounts.Workspace)), "/")
	if repocode.File(p) {
		return policy.ApprovalAsk, nil
	}
	if call.Workspace != "" && repocode.File(resolved(call.Workspace, p)) {
		return policy.ApprovalAsk, nil
	}
	return policy.ApprovalPreApproved, nil
}

// resolved is p (relative to the workspace at root) with the symlinks on
// its way followed, relative to root again; its directory's when p does
// not exist yet; p when neither resolves.
func resolved(root, p string) string {
	full := filepath.Join(root, filepath.FromSlash(p))
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		dir, derr := filepath.EvalSymlinks(filepath.Dir(full))
		if derr != nil {
			return p
		}
		real = filepath.Join(dir, filepath.Base(full))
	}
	rel, err := filepath.Rel(root, real)
	if err != nil {
		return p
	}
	return filepath.ToSlash(rel)
}

// Interface guards.
var (
	_ kind.CallApprover = (*Compiled)(nil)
	_ kind.ToolsetOnly  = Kind{}
	_ kind.Spec         = (*Spec)(nil)
	_ kind.Effecter     = (*Spec)(nil)
	_ kind.Compiled     = (*Compiled)(nil)
)
