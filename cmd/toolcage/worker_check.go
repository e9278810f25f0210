package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/worker"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors/host"
	"github.com/toolcage/toolcage/executors/sandbox"
)

type workerCheckOptions struct {
	file string
	json bool
}

func workerCheckCommand() *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "check a worker file, with no daemon",
		ArgsUsage: "FILE",
		UsageText: `toolcage worker check [--json] FILE

Examples:
   toolcage worker check examples/workers/ops.yaml
   toolcage worker check --json ~/agents/ops.yaml`,
		Description: `Reads a worker file as the daemon would, with the tool files it names, and
prints a one-line summary. Every problem is listed on stderr, one per line,
as file:line:col: message, the way compilers report them (editors jump to
them). Tools the worker names from the catalog are not looked up: that
needs the daemon.

With --json, stdout holds {"valid": true, "worker": ...} or
{"valid": false, "problems": [{"file", "line", "column", "message"}]}, with
absolute file paths.

Exits 0 when the file is valid and 2 when it is not (or cannot be read).`,
		Flags: []cli.Flag{jsonFlag()},
		Action: func(cCtx *cli.Context) error {
			var file string
			switch n := cCtx.NArg(); {
			case n == 0:
				return usageErrorf(cCtx, "missing the worker FILE")
			case n > 1:
				return usageErrorf(cCtx, "want one worker FILE, got %d arguments: %s", n, strings.Join(cCtx.Args().Slice(), " "))
			default:
				file = cCtx.Args().First()
			}
			a := appOf(cCtx)
			return runWorkerCheck(cCtx.Context, a, workerCheckOptions{file: file, json: a.jsonOut(cCtx)})
		},
	}
}

// workerCheckResult is the --json answer of worker check.
type workerCheckResult struct {
	Valid    bool            `json:"valid"`
	Worker   *worker.Worker  `json:"worker,omitempty"`
	Problems []workerProblem `json:"problems,omitempty"`
}

type workerProblem struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Message string `json:"message"`
}

func runWorkerCheck(_ context.Context, a *app, opts workerCheckOptions) error {
	w, err := worker.Load(opts.file)
	var pe *worker.ParseError
	switch {
	case errors.As(err, &pe):
		return reportWorkerProblems(a, opts, pe)
	case err != nil:
		return inputErrorf("%v", trimPathError(err))
	}
	if err := checkWorkerHostPaths(w); err != nil {
		return codedErrorf(errdefs.Forbidden, "%s: %v", shownPath(opts.file, w.Path), err)
	}
	if opts.json {
		return writeValueJSON(a.out, workerCheckResult{Valid: true, Worker: w})
	}
	_, err = fmt.Fprintf(a.out, "%s: %s\n", shownPath(opts.file, w.Path), workerSummary(w, func(p string) string { return shownPath(opts.file, p) }))
	return err
}

// reportWorkerProblems prints every problem as file:line:col: message on
// stderr (or as JSON on stdout) and exits 2.
func reportWorkerProblems(a *app, opts workerCheckOptions, pe *worker.ParseError) error {
	if opts.json {
		res := workerCheckResult{}
		for _, p := range pe.Problems {
			res.Problems = append(res.Problems, workerProblem{File: p.File, Line: p.Line, Column: p.Column, Message: p.Message})
		}
		if err := writeValueJSON(a.out, res); err != nil {
			return err
		}
		return cli.Exit("", exitUsage)
	}
	var b strings.Builder
	for i, p := range pe.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s:%d:%d: %s", shownPath(opts.file, p.File), p.Line, p.Column, p.Message)
	}
	return cli.Exit(b.String(), exitUsage)
}

// shownPath shows abs relative to the working directory when the person
// named the file that way, so the lines read as the command was typed.
func shownPath(given, abs string) string {
	if filepath.IsAbs(given) {
		return abs
	}
	wd, err := os.Getwd()
	if err != nil {
		return abs
	}
	if rel, err := filepath.Rel(wd, abs); err == nil {
		return rel
	}
	return abs
}

// workerSummary is the one line worker check prints for a valid file;
// shown shows a path as the file's was given.
func workerSummary(w *worker.Worker, shown func(string) string) string {
	names := append([]string{}, w.Tools...)
	for _, t := range w.LocalTools {
		names = append(names, t.Def.Name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "worker %s is valid: %s", w.Name, plural(len(names), "tool"))
	if len(names) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(names, ", "))
	}
	fromFiles, fromToolsets := 0, 0
	for _, t := range w.LocalTools {
		if strings.HasPrefix(t.File, "toolset:") {
			fromToolsets++
		} else {
			fromFiles++
		}
	}
	if fromFiles > 0 {
		fmt.Fprintf(&b, ", %d from tool files", fromFiles)
	}
	if fromToolsets > 0 {
		fmt.Fprintf(&b, ", %d from toolsets", fromToolsets)
	}
	if w.Workspace != "" {
		mode := "read-only"
		if !w.ReadOnly {
			mode = "writable, protect: " + w.ProtectMode()
		}
		fmt.Fprintf(&b, "; workspace %s (%s)", shown(w.Workspace), mode)
	}
	if w.Approval.Default != "" {
		fmt.Fprintf(&b, "; approval %s by default", w.Approval.Default)
	}
	if w.RateLimit != nil {
		fmt.Fprintf(&b, "; %d calls/min", w.RateLimit.PerMinute)
	}
	if t := time.Duration(w.Limits.Timeout); t > 0 {
		fmt.Fprintf(&b, "; timeout %s", t)
	}
	if w.AgentTools.Create {
		b.WriteString("; the agent may create tools")
	}
	return b.String()
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// checkWorkerHostPaths refuses, as a root daemon's `worker add` would, a
// workspace or mount the sandbox cannot be given as its own (the kernel
// or file system cannot idmap it to uid 65534), with the path, its owner
// and mode and what to do. Run as root only (an unprivileged daemon maps
// nothing), with the default sandbox ids, and only where the executor
// binary (which makes the mappings) is found; the daemon checks again.
func checkWorkerHostPaths(w *worker.Worker) error {
	if os.Geteuid() != 0 {
		return nil
	}
	exe, err := host.FindExecutor("")
	if err != nil {
		return nil
	}
	maps := &sandbox.IDMaps{Helper: exe}
	defer maps.Close()
	var errs []error
	for _, hp := range w.HostPaths() {
		b := sandbox.Bind{Source: hp.Path, Writable: hp.Writable, NoSymlinks: true}
		var be *sandbox.BindError
		if err := sandbox.CheckBind(b, sandbox.DefaultHostID, sandbox.DefaultHostID, maps); errors.As(err, &be) {
			errs = append(errs, fmt.Errorf("%s: %w", hp.What, err))
		}
	}
	return errors.Join(errs...)
}
