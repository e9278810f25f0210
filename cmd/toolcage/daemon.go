package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon"
)

func daemonCommand() *cli.Command {
	return &cli.Command{
		Name:  "daemon",
		Usage: "run the toolcage daemon in the foreground",
		UsageText: `toolcage daemon [--config FILE] [--data-dir DIR] [--socket PATH]

   toolcage daemon                                   # embedded defaults
   toolcage --socket /tmp/tc.sock daemon --data-dir /tmp/tc`,
		Description: `Serves the socket API until SIGTERM or SIGINT, then drains calls in flight,
stops the executors and checkpoints the database.

Under systemd (toolcage.socket and toolcage.service) it serves the socket
systemd passes (LISTEN_FDS) instead of making one, and tells NOTIFY_SOCKET
READY=1 once it serves and STOPPING=1 when it starts draining.

Configuration comes from the embedded defaults (configs/toolcage.yaml), then
--config FILE, then TOOLCAGE_* environment variables (TOOLCAGE_SOCKET,
TOOLCAGE_DATA_DIR, TOOLCAGE_EXECUTOR_PATH, TOOLCAGE_LOG_LEVEL, ...), then flags.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Usage: "YAML config `FILE` (unknown keys are errors)", EnvVars: []string{"TOOLCAGE_CONFIG"}},
			&cli.StringFlag{Name: "socket", Usage: "listen on `PATH` (the same as the global --socket)"},
			&cli.StringFlag{Name: "data-dir", Usage: "`DIR` for the database (default ~/.local/share/toolcage or /var/lib/toolcage)"},
			&cli.StringFlag{Name: "executor", Usage: "`PATH` of toolcage-executor (default: next to this binary)"},
			&cli.StringFlag{Name: "log-level", Usage: "debug, info, warn or error"},
			&cli.StringFlag{Name: "cpu-profile", Usage: "write a CPU profile of the daemon to `FILE` until it stops (for `go tool pprof`)"},
		},
		Action: runDaemon,
	}
}

func runDaemon(c *cli.Context) error {
	overrides := map[string]any{}
	if s, ok := socketFlag(c); ok {
		overrides["socket"] = s
	}
	if c.IsSet("data-dir") {
		overrides["data_dir"] = c.String("data-dir")
	}
	if c.IsSet("executor") {
		overrides["executor.path"] = c.String("executor")
	}
	if c.IsSet("log-level") {
		overrides["log.level"] = c.String("log-level")
	}
	cfg, err := daemon.LoadConfig(c.String("config"), overrides)
	if err != nil {
		return cli.Exit(fmt.Sprintf("Error: %v", err), 2)
	}
	log := newLogger(c.App.ErrWriter, cfg.Log)
	if f := c.String("cpu-profile"); f != "" {
		stopProfile, err := startCPUProfile(f)
		if err != nil {
			return cli.Exit(fmt.Sprintf("Error: %v", err), 1)
		}
		defer stopProfile()
	}
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	d, err := daemon.New(ctx, cfg, log)
	if err != nil {
		return cli.Exit(fmt.Sprintf("Error: %v", err), 1)
	}
	d.Prewarm(ctx)
	if err := d.Serve(ctx); err != nil {
		return cli.Exit(fmt.Sprintf("Error: %v", err), 1)
	}
	return nil
}

// socketFlag returns the daemon's own --socket, else the global --socket
// (or TOOLCAGE_SOCKET) when it was set; unset, the config file decides.
// The daemon's flag shadows the global one in urfave's lookups, so the
// global one is read from the parent context.
func socketFlag(c *cli.Context) (string, bool) {
	if c.IsSet("socket") {
		return c.String("socket"), true
	}
	for _, p := range c.Lineage()[1:] {
		if p.IsSet("socket") {
			return p.String("socket"), true
		}
	}
	return "", false
}

// startCPUProfile profiles the process into file until the returned
// function is called.
func startCPUProfile(file string) (func(), error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// newLogger writes the daemon's log to w as text or JSON lines.
func newLogger(w io.Writer, c daemon.LogConfig) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(c.Level))
	opts := &slog.HandlerOptions{Level: lvl, ReplaceAttr: durationText}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// durationText writes durations as "30s", as the config file does, where
// slog's JSON handler would write nanoseconds.
func durationText(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.String(a.Key, a.Value.Duration().String())
	}
	return a
}
