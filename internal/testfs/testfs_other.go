//go:build !linux

package testfs

import "errors"

// immutable: only Linux's inode flags are known here.
func immutable(string) (func(), error) {
	return nil, errors.New("no immutable flag on this system")
}
