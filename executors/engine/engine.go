// Package engine connects to a Docker Engine the way the docker CLI does:
// DOCKER_HOST (unix:// or tcp://), DOCKER_TLS_VERIFY and
// DOCKER_CERT_PATH from the environment, the API version negotiated with
// the engine. Every docker-facing package of toolcage gets its client here,
// so a remote engine is one environment variable away.
package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/moby/moby/client"

	"github.com/toolcage/toolcage/errdefs"
)

// Connect returns a client for the engine the environment names (the
// local socket when it names none) and checks that the engine answers.
func Connect(ctx context.Context) (*client.Client, error) {
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return nil, errdefs.Errorf(errdefs.Unavailable, "docker client: %v", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := cli.Ping(pctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		cli.Close()
		return nil, errdefs.Errorf(errdefs.Unavailable, "docker engine at %s does not answer: %v", cli.DaemonHost(), err)
	}
	return cli, nil
}

// Info is what `toolcage sandbox check` reports about the engine.
type Info struct {
	// Host is where the client connects (DOCKER_HOST or the default).
	Host string `json:"host"`
	// Version and APIVersion are the engine's.
	Version    string `json:"version"`
	APIVersion string `json:"api_version"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
}

// Describe asks the engine for its version.
func Describe(ctx context.Context, cli *client.Client) (Info, error) {
	v, err := cli.ServerVersion(ctx, client.ServerVersionOptions{})
	if err != nil {
		return Info{Host: cli.DaemonHost()}, fmt.Errorf("docker version: %w", err)
	}
	return Info{Host: cli.DaemonHost(), Version: v.Version, APIVersion: v.APIVersion, OS: v.Os, Arch: v.Arch}, nil
}
