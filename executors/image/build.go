package image

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/jsonstream"
	"github.com/moby/moby/client"

	"github.com/toolcage/toolcage/errdefs"
)

// Tag is the image reference for a toolcage version.
func Tag(version string) string {
	if version == "" {
		version = "dev"
	}
	// A tag allows [A-Za-z0-9_.-], up to 128 characters.
	t := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.', r == '-':
			return r
		}
		return '-'
	}, version)
	if len(t) > 128 {
		t = t[:128]
	}
	return Repository + ":" + t
}

// Build makes the image from src with the engine's classic builder (no
// BuildKit session is needed for a context of plain files), tags it tag and
// returns its ID ("sha256:…"). The builder's output goes to progress (may
// be nil).
func Build(ctx context.Context, cli *client.Client, src Sources, tag string, progress io.Writer) (string, error) {
	buildCtx, err := ContextBytes(src)
	if err != nil {
		return "", errdefs.Errorf(errdefs.InvalidRequest, "%v", err)
	}
	res, err := cli.ImageBuild(ctx, bytes.NewReader(buildCtx), client.ImageBuildOptions{
		Tags: []string{tag}, Remove: true, ForceRemove: true, NoCache: true,
		Labels: map[string]string{Label: "executor"},
	})
	if err != nil {
		return "", errdefs.Errorf(errdefs.Unavailable, "docker build: %v", err)
	}
	defer res.Body.Close()
	id, err := readBuild(res.Body, progress)
	if err != nil {
		return "", err
	}
	// The ID the engine reports for the tag is the one the daemon pins.
	got, err := Inspect(ctx, cli, tag)
	if err != nil {
		return "", err
	}
	if id != "" && got != id {
		return "", errdefs.Errorf(errdefs.Internal, "built image %s but %s is %s", id, tag, got)
	}
	return got, nil
}

// readBuild follows the builder's JSON message stream: it forwards the
// output, fails on an error message and returns the image ID it announces.
func readBuild(r io.Reader, progress io.Writer) (string, error) {
	dec := json.NewDecoder(r)
	id := ""
	for {
		var m jsonstream.Message
		if err := dec.Decode(&m); err == io.EOF {
			break
		} else if err != nil {
			return "", errdefs.Errorf(errdefs.Unavailable, "docker build: reading the engine's output: %v", err)
		}
		if m.Error != nil {
			return "", errdefs.Errorf(errdefs.Internal, "docker build: %s", m.Error.Message)
		}
		if progress != nil && m.Stream != "" {
			io.WriteString(progress, m.Stream)
		}
		if m.Aux != nil {
			var aux struct {
				ID string `json:"ID"`
			}
			if json.Unmarshal(*m.Aux, &aux) == nil && aux.ID != "" {
				id = aux.ID
			}
		}
	}
	return id, nil
}

// ErrMissing is returned (wrapped) by Check when the engine has no image
// of that name.
var ErrMissing = errors.New("image not found")

// Inspect returns the ID of the image ref names, wrapping ErrMissing when
// there is none.
func Inspect(ctx context.Context, cli *client.Client, ref string) (string, error) {
	res, err := cli.ImageInspect(ctx, ref)
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return "", fmt.Errorf("%s: %w", ref, ErrMissing)
		}
		return "", errdefs.Errorf(errdefs.Unavailable, "docker image inspect %s: %v", ref, err)
	}
	return res.ID, nil
}

// Check is the daemon's start-up check: the image tag names exists and,
// when pinned is set, is exactly that image. The error says how to fix it.
func Check(ctx context.Context, cli *client.Client, tag, pinned string) (string, error) {
	id, err := Inspect(ctx, cli, tag)
	if errors.Is(err, ErrMissing) {
		return "", errdefs.Errorf(errdefs.Unavailable, "the executor image %s is not on the docker engine at %s: build it with `toolcage image build` (or `make image`) and put the ID it prints in docker.image_id", tag, cli.DaemonHost())
	}
	if err != nil {
		return "", err
	}
	if pinned != "" && normalizeID(pinned) != id {
		return "", errdefs.Errorf(errdefs.Unavailable, "the executor image %s is %s, but the config pins docker.image_id %s: rebuild it with `toolcage image build` and pin the ID it prints, or pin %s if this image is the one you built", tag, id, pinned, id)
	}
	return id, nil
}

func normalizeID(id string) string {
	if !strings.HasPrefix(id, "sha256:") {
		return "sha256:" + id
	}
	return id
}
