// Package imagetest gives tests the real Docker Engine (through
// ory/dockertest's pool) and the executor image, built once per test
// binary from the real executor. Without an engine (`docker info` would
// fail) the tests skip, saying so; under CI=true they fail instead.
package imagetest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/ory/dockertest/v3"

	"github.com/toolcage/toolcage/executors/engine"
	"github.com/toolcage/toolcage/executors/image"
)

var (
	once     sync.Once
	cli      *client.Client
	imageID  string
	tag      string
	buildDur time.Duration
	setupErr error
)

// Engine returns dockertest's pool and a Moby client for the engine, or
// skips the test when there is no engine (fails it under CI=true).
func Engine(t testing.TB) (*dockertest.Pool, *client.Client) {
	t.Helper()
	p, err := dockertest.NewPool("")
	if err == nil {
		err = p.Client.Ping()
	}
	if err != nil {

		if os.Getenv("CI") == "true" {
			t.Fatalf("docker engine unreachable under CI=true (docker info fails): %v", err)
		}
		t.Skipf("skipping: no Docker Engine here (docker info fails: %v)", err)
	}
	c, err := engine.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return p, c
}

// Image builds the executor image from executor once per test binary and
// returns its tag and ID. Call Cleanup from TestMain to remove it.
func Image(t testing.TB, executor string) (string, string) {
	t.Helper()
	Engine(t)
	once.Do(func() {
		cli, setupErr = engine.Connect(context.Background())
		if setupErr != nil {
			return
		}
		tag = image.Repository + ":test-" + strconv.Itoa(os.Getpid())
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		start := time.Now()
		imageID, setupErr = image.Build(ctx, cli, image.Sources{Executor: executor}, tag, nil)
		buildDur = time.Since(start)
	})
	if setupErr != nil {
		t.Fatalf("building the executor image: %v", setupErr)
	}
	return tag, imageID
}

// BuildTime is how long Image's build took (0 before it ran).
func BuildTime() time.Duration { return buildDur }

// Cleanup removes the image Image built, if any. It returns an error when
// containers with label are still on the engine (pass "" to skip that).
func Cleanup(label string) error {
	if cli == nil {
		return nil
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var left error
	if label != "" {
		res, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", label)})
		if err != nil {
			left = err
		} else if n := len(res.Items); n > 0 {
			left = fmt.Errorf("%d containers labelled %s are left on the engine", n, label)
			for _, c := range res.Items {
				cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true})
			}
		}
	}
	if imageID != "" {
		if _, err := cli.ImageRemove(ctx, imageID, client.ImageRemoveOptions{Force: true, PruneChildren: true}); err != nil && left == nil {
			left = err
		}
	}
	return left
}

// RemoveImage removes an image a test built, by ID.
func RemoveImage(c *client.Client, id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := c.ImageRemove(ctx, id, client.ImageRemoveOptions{Force: true, PruneChildren: true})
	return err
}
