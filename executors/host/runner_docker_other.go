//go:build !linux

package host

import (
	"errors"
	"os"

	"github.com/toolcage/toolcage/executors/sandbox"
)

var errCannotMount = errors.New("cannot mount")

// bindFD: no mounts here; the engine gets the source path.
func bindFD(*os.File, string, *sandbox.IDMaps) error { return errCannotMount }

func unbindPrivate(mp string) error { return os.Remove(mp) }
