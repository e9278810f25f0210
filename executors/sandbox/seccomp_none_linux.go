//go:build linux && !amd64 && !arm64

package sandbox

import "errors"

// seccompSupported: no syscall table for this architecture yet.
const seccompSupported = false

func installSeccomp() error { return errors.New("seccomp: no syscall table for this architecture") }
