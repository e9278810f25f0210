package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon"
	"github.com/toolcage/toolcage/executors/engine"
	"github.com/toolcage/toolcage/executors/host"
	"github.com/toolcage/toolcage/executors/image"
)

// imageCommand is the image noun: the executor's container image.
func imageCommand() *cli.Command {
	return &cli.Command{
		Name:  "image",
		Usage: "build the container image isolation: docker runs executors in",
		UsageText: `toolcage image command [command options] [arguments...]

Examples:
   toolcage image build
   DOCKER_HOST=tcp://10.0.0.5:2376 DOCKER_TLS_VERIFY=1 toolcage image build --json`,
		Subcommands: []*cli.Command{imageBuildCommand()},
	}
}

type imageBuildOptions struct {
	configFile string
	executor   string
	busybox    string
	tag        string
	quiet      bool
	json       bool
}

func imageBuildCommand() *cli.Command {
	return &cli.Command{
		Name:  "build",
		Usage: "build the executor image from scratch on the Docker Engine and print its ID",
		UsageText: `toolcage image build [--executor PATH] [--busybox PATH] [--tag TAG] [--json]

Examples:
   toolcage image build
   toolcage image build --busybox /usr/local/bin/busybox --tag toolcage-executor:test`,
		Description: `Builds the image executors run in under isolation: docker, with no registry
and no base image: the static toolcage-executor, a static busybox as /bin/sh
and the usual commands (Debian: apt-get install busybox-static), /etc/passwd
with the non-root user toolcage (uid 65532), /tmp and /work. The build
context is made here and sent over the Docker Engine API to the engine
DOCKER_HOST names (the local socket by default).

The image is tagged docker.image (default toolcage-executor:<version>); the
ID printed is what to pin as docker.image_id in the daemon's config.`,
		Flags: []cli.Flag{
			configFlag(),
			&cli.StringFlag{Name: "executor", Usage: "`PATH` of the static toolcage-executor (default: executor.path, else next to this binary)"},
			&cli.StringFlag{Name: "busybox", Usage: "`PATH` of a static busybox", Value: image.DefaultBusybox},
			&cli.StringFlag{Name: "tag", Usage: "image `TAG` (default: docker.image, else toolcage-executor:<version>)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only the image ID, not the builder's output"},
			jsonFlag(),
		},
		Action: func(cCtx *cli.Context) error {
			if err := noArgs(cCtx); err != nil {
				return err
			}
			a := appOf(cCtx)
			return runImageBuild(cCtx.Context, a, imageBuildOptions{
				configFile: cCtx.String("config"), executor: cCtx.String("executor"),
				busybox: cCtx.String("busybox"), tag: cCtx.String("tag"),
				quiet: cCtx.Bool("quiet"), json: a.jsonOut(cCtx),
			})
		},
	}
}

// imageBuildResult is the --json answer of image build.
type imageBuildResult struct {
	Tag      string  `json:"tag"`
	ID       string  `json:"id"`
	Engine   string  `json:"engine"`
	Executor string  `json:"executor"`
	Seconds  float64 `json:"seconds"`
}

func runImageBuild(ctx context.Context, a *app, opts imageBuildOptions) error {
	var overrides map[string]any
	if opts.executor != "" {
		overrides = map[string]any{"executor.path": opts.executor}
	}
	cfg, err := daemon.LoadConfig(opts.configFile, overrides)
	if err != nil {
		return inputErrorf("%v", err)
	}
	exe, err := host.FindExecutor(cfg.Executor.Path)
	if err != nil {
		return &cliError{msg: err.Error(), exit: exitFailure}
	}
	tag := opts.tag
	if tag == "" {
		tag = cfg.DockerImage()
	}
	cli, err := engine.Connect(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	var progress io.Writer
	if !opts.quiet && !opts.json {
		progress = a.err
	}
	start := time.Now()
	id, err := image.Build(ctx, cli, image.Sources{Executor: exe, Busybox: opts.busybox}, tag, progress)
	if err != nil {
		return err
	}
	res := imageBuildResult{Tag: tag, ID: id, Engine: cli.DaemonHost(), Executor: exe, Seconds: time.Since(start).Seconds()}
	if opts.json {
		return writePlainJSON(a.out, res)
	}
	if opts.quiet {
		_, err = fmt.Fprintln(a.out, id)
		return err
	}
	_, err = fmt.Fprintf(a.out, "%s\n", id)
	if err == nil {
		fmt.Fprintf(a.err, "built %s in %.1fs on %s; pin it in the daemon's config:\n  docker:\n    image: %s\n    image_id: %s\n", tag, res.Seconds, res.Engine, tag, id)
	}
	return err
}
