package main

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon"
	"github.com/toolcage/toolcage/daemon/api"
)

// The client's version is daemon.Version, the one variable the Makefile sets
// with -ldflags "-X github.com/toolcage/toolcage/daemon.Version=…": client
// and daemon built from one binary always say the same.

// versionInfo is what "version --json" prints.
type versionInfo struct {
	Client clientVersion `json:"client"`
	Daemon *api.Health   `json:"daemon"` // nil when the daemon did not answer
}

type clientVersion struct {
	Version string `json:"version"`
	Go      string `json:"go"`
	OS      string `json:"os"`
	Arch    string `json:"arch"`
}

type versionOptions struct {
	json bool
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "show the CLI's and the daemon's versions",
		UsageText: `toolcage version [--json]

Example:
   toolcage version`,
		Description: `Shows this binary's version and, when the daemon answers within two seconds,
the daemon's. Exits 0 even when the daemon is down (see 'toolcage health').`,
		Flags: []cli.Flag{jsonFlag()},
		Action: func(cCtx *cli.Context) error {
			if err := noArgs(cCtx); err != nil {
				return err
			}
			a := appOf(cCtx)
			return runVersion(cCtx.Context, a, versionOptions{json: a.jsonOut(cCtx)})
		},
	}
}

func runVersion(ctx context.Context, a *app, opts versionOptions) error {
	info := versionInfo{Client: clientVersion{Version: daemon.Version, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var h api.Health
	_, daemonErr := a.request(ctx, http.MethodGet, "/v1/health", nil, &h)
	if daemonErr == nil {
		info.Daemon = &h
	}
	if opts.json {
		return writeValueJSON(a.out, info)
	}
	return writeVersion(a.out, &info, a.socket)
}

// writeVersion prints the versions as a key/value block.
func writeVersion(w io.Writer, v *versionInfo, socket string) error {
	tw := newKV(w)
	row(tw, "Client:", "toolcage "+v.Client.Version+" ("+v.Client.Go+" "+v.Client.OS+"/"+v.Client.Arch+")")
	if v.Daemon != nil {
		row(tw, "Daemon:", "toolcage "+orDash(v.Daemon.Version)+" (up "+formatSeconds(v.Daemon.UptimeSeconds)+")")
	} else {
		row(tw, "Daemon:", "not reachable at "+socket)
	}
	return tw.Flush()
}
