package sandbox

import "fmt"

// FileID names a file by its device and inode: what a path named when a
// runner pinned it. Every open of one file has the same FileID, in every
// mount namespace and through every bind mount of it, so a runner
// compares what a sandbox or container got with what it checked by
// FileID, never by path.
type FileID struct {
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
}

func (id FileID) String() string {
	return fmt.Sprintf("device %d:%d inode %d", id.Dev>>8&0xfff|id.Dev>>32&^0xfff, id.Dev&0xff|id.Dev>>12&^0xff, id.Ino)
}

// MountStat is what a container's pid 1 sees at one mount target
// (ContainerReply.Stats): the file there and whether its mount is
// read-only.
type MountStat struct {
	Path     string `json:"path"`
	ID       FileID `json:"id"`
	ReadOnly bool   `json:"ro,omitempty"`
	Err      string `json:"err,omitempty"`
}
