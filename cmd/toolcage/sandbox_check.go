package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon"
	"github.com/toolcage/toolcage/executors/engine"
	"github.com/toolcage/toolcage/executors/host"
	"github.com/toolcage/toolcage/executors/image"
	"github.com/toolcage/toolcage/executors/sandbox"
)

// sandboxCommand is the sandbox noun: what the process sandbox gives on
// this machine.
func sandboxCommand() *cli.Command {
	return &cli.Command{
		Name:  "sandbox",
		Usage: "inspect the process sandbox executors run in",
		UsageText: `toolcage sandbox command [command options] [arguments...]

Examples:
   toolcage sandbox check
   toolcage sandbox check --config /etc/toolcage.yaml --json`,
		Subcommands: []*cli.Command{
			sandboxCheckCommand(),
		},
	}
}

type sandboxCheckOptions struct {
	configFile string
	executor   string // overrides executor.path when set
	json       bool
}

func sandboxCheckCommand() *cli.Command {
	return &cli.Command{
		Name:  "check",
		Usage: "show which protections the sandbox gets here, and whether the configured minimum is met",
		UsageText: `toolcage sandbox check [--config FILE] [--executor PATH] [--json]

Examples:
   toolcage sandbox check
   toolcage sandbox check --config /etc/toolcage.yaml`,
		Description: `Starts one sandbox around the executor binary, exactly as the daemon would
with its configuration, and reports what the process inside really got:
user, pid, mount, network, ipc, uts and cgroup namespaces; the cgroup version
and whether its memory and pids caps apply; the Landlock ABI; seccomp;
no_new_privs; dropped capabilities; whether the daemon runs unprivileged; and
the sandbox's own notes on anything degraded. Then it compares that with the
configured minimum (sandbox.require), as the daemon does at start.

The configuration is read as 'toolcage daemon' reads it: the embedded
defaults, then --config FILE (TOOLCAGE_CONFIG), then TOOLCAGE_* variables.
The executor is found as the daemon finds it: executor.path (or --executor),
else next to this binary, else on PATH. No daemon is needed.

Exit status: 0 when the minimum is met (or the sandbox is disabled by
sandbox.enabled: false, with a warning); 1 when it is not, naming what is
missing; 2 for a bad flag or config.`,
		Flags: []cli.Flag{
			configFlag(),
			&cli.StringFlag{Name: "executor", Usage: "`PATH` of toolcage-executor (default: executor.path, else next to this binary)"},
			jsonFlag(),
		},
		Action: func(cCtx *cli.Context) error {
			if err := noArgs(cCtx); err != nil {
				return err
			}
			a := appOf(cCtx)
			return runSandboxCheck(cCtx.Context, a, sandboxCheckOptions{
				configFile: cCtx.String("config"),
				executor:   cCtx.String("executor"),
				json:       a.jsonOut(cCtx),
			})
		},
	}
}

// sandboxRequire is the configured minimum, every field shown.
type sandboxRequire struct {
	Cgroup      bool `json:"cgroup"`
	LandlockABI int  `json:"landlock_abi"`
	Seccomp     bool `json:"seccomp"`
}

// sandboxCheckResult is the --json answer of sandbox check.
type sandboxCheckResult struct {
	Enabled  bool            `json:"enabled"`
	Executor string          `json:"executor,omitempty"`
	Report   *sandbox.Report `json:"report,omitempty"`
	Require  sandboxRequire  `json:"require"`
	// Met is absent when the sandbox is disabled.
	Met *bool `json:"met,omitempty"`
	// Missing says what the sandbox lacks, when Met is false.
	Missing string `json:"missing,omitempty"`
	// Docker is what isolation: docker would get: the engine and the image.
	Docker dockerCheck `json:"docker"`
}

// dockerCheck reports the engine DOCKER_HOST names and the executor image.
type dockerCheck struct {
	Engine *engine.Info `json:"engine,omitempty"`
	// EngineError says why the engine could not be reached.
	EngineError string `json:"engine_error,omitempty"`
	Image       string `json:"image"`
	// ImageStatus is present, missing, mismatch (not the pinned ID) or unknown.
	ImageStatus string `json:"image_status"`
	ImageID     string `json:"image_id,omitempty"`
	Pinned      string `json:"pinned_id,omitempty"`
	ImageError  string `json:"image_error,omitempty"`
}

// checkDocker asks the engine for its version and the image, never failing.
func checkDocker(ctx context.Context, cfg *daemon.Config) dockerCheck {
	dc := dockerCheck{Image: cfg.DockerImage(), Pinned: cfg.Docker.ImageID, ImageStatus: "unknown"}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cli, err := engine.Connect(ctx)
	if err != nil {
		dc.EngineError = err.Error()
		return dc
	}
	defer cli.Close()
	if info, err := engine.Describe(ctx, cli); err == nil {
		dc.Engine = &info
	} else {
		dc.EngineError = err.Error()
	}
	id, err := image.Inspect(ctx, cli, dc.Image)
	switch {
	case errors.Is(err, image.ErrMissing):
		dc.ImageStatus = "missing"
	case err != nil:
		dc.ImageError = err.Error()
	default:
		dc.ImageID, dc.ImageStatus = id, "present"
		if _, err := image.Check(ctx, cli, dc.Image, dc.Pinned); err != nil {
			dc.ImageStatus, dc.ImageError = "mismatch", err.Error()
		}
	}
	return dc
}

// writeDockerCheck prints the docker part of sandbox check.
func writeDockerCheck(w io.Writer, dc dockerCheck) error {
	var b strings.Builder
	b.WriteString("\nDocker (isolation: docker):\n")
	if dc.Engine != nil {
		fmt.Fprintf(&b, "  engine:  %s at %s (API %s, %s/%s)\n", dc.Engine.Version, dc.Engine.Host, dc.Engine.APIVersion, dc.Engine.OS, dc.Engine.Arch)
	} else {
		fmt.Fprintf(&b, "  engine:  unreachable: %s\n", dc.EngineError)
	}
	switch dc.ImageStatus {
	case "present":
		fmt.Fprintf(&b, "  image:   %s present, %s\n", dc.Image, dc.ImageID)
	case "missing":
		fmt.Fprintf(&b, "  image:   %s MISSING: build it with `toolcage image build`\n", dc.Image)
	case "mismatch":
		fmt.Fprintf(&b, "  image:   %s is %s, NOT the pinned %s\n", dc.Image, dc.ImageID, dc.Pinned)
	default:
		fmt.Fprintf(&b, "  image:   %s unknown (no engine)\n", dc.Image)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

const sandboxDisabledWarning = "Warning: the sandbox is disabled (sandbox.enabled: false): executors run as plain child processes with no namespaces, cgroups, Landlock or seccomp"

func runSandboxCheck(ctx context.Context, a *app, opts sandboxCheckOptions) error {
	var overrides map[string]any
	if opts.executor != "" {
		overrides = map[string]any{"executor.path": opts.executor}
	}
	cfg, err := daemon.LoadConfig(opts.configFile, overrides)
	if err != nil {
		return inputErrorf("%v", err)
	}
	sc := cfg.SandboxConfig()
	res := sandboxCheckResult{
		Enabled: cfg.Sandbox.Enabled,
		Require: sandboxRequire{Cgroup: sc.Require.Cgroup, LandlockABI: sc.Require.LandlockABI, Seccomp: sc.Require.Seccomp},
	}
	if !cfg.Sandbox.Enabled {
		if opts.json {
			err = writePlainJSON(a.out, res)
		} else {
			_, err = fmt.Fprintln(a.out, "sandbox: disabled by config (sandbox.enabled: false)")
		}
		if err != nil {
			return err
		}
		fmt.Fprintln(a.err, sandboxDisabledWarning)
		return nil
	}
	exe, err := host.FindExecutor(cfg.Executor.Path)
	if err != nil {
		return &cliError{msg: err.Error(), exit: exitFailure}
	}
	res.Executor = exe
	res.Docker = checkDocker(ctx, &cfg)
	rep, lack := probeSandbox(exe, sc)
	res.Report = &rep
	met := lack == nil
	res.Met = &met
	if lack != nil {
		res.Missing = lack.Error()
	}
	if opts.json {
		err = writePlainJSON(a.out, res)
	} else if err = writeSandboxCheck(a.out, &cfg, res); err == nil {
		err = writeDockerCheck(a.out, res.Docker)
	}
	if err != nil {
		return err
	}
	if lack != nil {
		return &cliError{
			msg:  fmt.Sprintf("the sandbox does not meet the configured minimum: %v", lack),
			exit: exitFailure,
			hint: "The daemon refuses to start like this. Lower sandbox.require in the config, give the kernel what is missing, or (not recommended) set sandbox.enabled: false.",
		}
	}
	return nil
}

// probeSandbox starts one sandbox as the daemon does and judges it against
// the configured minimum. A sandbox refuses to start below its minimum, and
// then reports nothing active at all; so after a refusal it probes again
// without the minimum to show what this machine does give, and judges that.
// Both probes fail the same minimum (Requirements only gates what Meets
// checks), so the verdict is the daemon's either way.
func probeSandbox(exe string, sc sandbox.Config) (sandbox.Report, error) {
	rep := (&host.SandboxRunner{Path: exe, Config: sc}).Check()
	lack := rep.Meets(sc.Require)
	if lack == nil || sc.Require == (sandbox.Requirements{}) {
		return rep, lack
	}
	loose := sc
	loose.Require = sandbox.Requirements{}
	best := (&host.SandboxRunner{Path: exe, Config: loose}).Check()
	bestLack := best.Meets(sc.Require)
	if bestLack == nil {
		return rep, lack // the two probes disagree: keep the daemon's view
	}
	for _, n := range rep.Notes {
		if !slices.Contains(best.Notes, n) {
			best.Notes = append(best.Notes, "with sandbox.require: "+n)
		}
	}
	return best, bestLack
}

// writeSandboxCheck prints the protections as a table, the notes, the
// configured minimum and the verdict.
func writeSandboxCheck(w io.Writer, cfg *daemon.Config, res sandboxCheckResult) error {
	rep, req := res.Report, res.Require
	t := newTable(w)
	row(t, "PROTECTION", "STATUS", "DETAIL")
	ns := func(name string, ok bool, detail string) {
		row(t, name+" namespace", activeOr(ok, "MISSING"), detail+"; always required")
	}
	if rep.Unprivileged {
		ns("user", rep.UserNS, "root inside maps to the daemon's uid "+strconv.Itoa(os.Geteuid()))
	} else {
		ns("user", rep.UserNS, "root inside maps to host uid "+strconv.Itoa(sandbox.DefaultHostID)+" (nobody)")
	}
	ns("pid", rep.PidNS, "sees only its own processes")
	ns("mount", rep.MountNS, "minimal read-only root, private /tmp and work dir")
	row(t, "network namespace", activeOr(rep.NetNS, "missing"), "loopback only, unless the tool holds the network permission")
	ns("ipc", rep.IPCNS, "private System V IPC and POSIX queues")
	ns("uts", rep.UTSNS, "own host name")
	row(t, "cgroup namespace", activeOr(rep.CgroupNS, "missing"), "sees only its own cgroup")
	row(t, "cgroup", cgroupStatus(rep.Cgroup), cgroupDetail(cfg, *rep)+requiredMark(req.Cgroup, rep.Cgroup == "v1" || rep.Cgroup == "v2"))
	row(t, "landlock", landlockStatus(rep.LandlockABI), landlockDetail(rep.LandlockABI, req.LandlockABI))
	row(t, "seccomp", activeOr(rep.Seccomp, "missing"), "system call filter"+requiredMark(req.Seccomp, rep.Seccomp))
	row(t, "no_new_privs", activeOr(rep.NoNewPrivs, "MISSING"), "no privilege gain through exec; always required")
	caps := "dropped"
	if !rep.CapsDropped {
		caps = "MISSING"
	}
	row(t, "capabilities", caps, "every capability set empty; always required")
	if rep.Unprivileged {
		row(t, "unprivileged mode", "yes", "the daemon is not root (uid "+strconv.Itoa(os.Geteuid())+")")
	} else {
		row(t, "unprivileged mode", "no", "the daemon is root; the sandbox runs as uid "+strconv.Itoa(sandbox.DefaultHostID))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	var b strings.Builder
	if len(rep.Notes) > 0 {
		b.WriteString("\nNotes:\n")
		for _, n := range rep.Notes {
			fmt.Fprintf(&b, "  - %s\n", strings.ReplaceAll(strings.TrimSpace(n), "\n", "\n    "))
		}
	}
	fmt.Fprintf(&b, "\nExecutor: %s\n", res.Executor)
	fmt.Fprintf(&b, "Required: %s\n", requireSummary(req))
	if *res.Met {
		b.WriteString("Verdict:  met: the daemon will start with this sandbox\n")
	} else {
		fmt.Fprintf(&b, "Verdict:  NOT met: %s\n", res.Missing)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func activeOr(ok bool, otherwise string) string {
	if ok {
		return "active"
	}
	return otherwise
}

// requiredMark says whether the configuration requires a protection, and
// shouts when a required one is missing.
func requiredMark(required, have bool) string {
	switch {
	case !required:
		return ""
	case have:
		return "; required"
	default:
		return "; REQUIRED, missing"
	}
}

func cgroupStatus(v string) string {
	if v == "" {
		return "none"
	}
	return v
}

func cgroupDetail(cfg *daemon.Config, rep sandbox.Report) string {
	if v := rep.Cgroup; v == "v1" || v == "v2" {
		if rep.CPUQuota {
			return fmt.Sprintf("memory (%s), pids (%d) and CPU (%g) caps apply", cfg.Sandbox.Memory, cfg.Sandbox.Pids, cfg.Sandbox.CPUs)
		}
		return fmt.Sprintf("memory (%s) and pids (%d) caps apply; no CPU quota", cfg.Sandbox.Memory, cfg.Sandbox.Pids)
	}
	return fmt.Sprintf("no memory cap; pids capped by RLIMIT_NPROC (%d) only", cfg.Sandbox.Pids)
}

func landlockStatus(abi int) string {
	if abi <= 0 {
		return "missing"
	}
	return "ABI " + strconv.Itoa(abi)
}

func landlockDetail(have, want int) string {
	d := "file access limited to the sandbox's own root"
	switch {
	case want <= 0:
		return d + "; best effort"
	case have >= want:
		return fmt.Sprintf("%s; required ABI %d or later", d, want)
	default:
		return fmt.Sprintf("%s; REQUIRED ABI %d or later, have %d", d, want, have)
	}
}

// requireSummary lists what the daemon will not start without.
func requireSummary(r sandboxRequire) string {
	var parts []string
	if r.Cgroup {
		parts = append(parts, "cgroup memory and pids caps")
	}
	if r.LandlockABI > 0 {
		parts = append(parts, fmt.Sprintf("Landlock ABI %d or later", r.LandlockABI))
	}
	if r.Seccomp {
		parts = append(parts, "seccomp")
	}
	by := "nothing more"
	if len(parts) > 0 {
		by = strings.Join(parts, ", ")
	}
	return "user, pid, mount, ipc and uts namespaces, no_new_privs and dropped capabilities always; by sandbox.require: " + by
}
