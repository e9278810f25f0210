//go:build !linux

package sandbox

import "os"

// Pin is not available where there is no sandbox.
func Pin(p string) (*os.File, FileID, error) { return nil, FileID{}, ErrUnsupported }

// PinID is not available where there is no sandbox.
func PinID(p string) (FileID, error) { return FileID{}, ErrUnsupported }
