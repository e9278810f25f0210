//go:build !linux

package sandbox

import "os"

// Pin is not available where there is no sandbox.
func Pin(p string) (*os.File, FileID, error) { return nil, FileID{}, ErrUnsupported }

// PinID is not available where there is no sandbox.
func PinID(p string) (FileID, error) { return FileID{}, ErrUnsupported }

// IDMaps has nothing to hold where there is no sandbox.
type IDMaps struct{ Helper string }

// Close does nothing.
func (*IDMaps) Close() error { return nil }

// CheckBind checks nothing where there is no sandbox.
func CheckBind(Bind, int, int, *IDMaps) error { return nil }

// MountMapped is not available where there is no sandbox.
func MountMapped(*os.File, string, int, int, *IDMaps) error { return ErrUnsupported }
