package host

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/errdefs"
)

func TestKeyMounts(t *testing.T) {
	a := []Mount{{Source: "/srv/b", Target: "/workspace", Writable: true}, {Source: "/srv/a"}}
	b := []Mount{{Source: "/srv/a"}, {Source: "/srv/b", Target: "/workspace", Writable: true}}
	k1 := NewKey("shell", "process", []string{"filesystem"}).WithMounts(a)
	k2 := NewKey("shell", "process", []string{"filesystem"}).WithMounts(b)
	if k1 != k2 {
		t.Fatalf("the same mounts in another order make another key: %q vs %q", k1.Mounts, k2.Mounts)
	}
	if got := k1.MountList(); !reflect.DeepEqual(got, b) {
		t.Fatalf("MountList = %+v, want %+v", got, b)
	}
	plain := NewKey("shell", "process", []string{"filesystem"})
	if plain == k1 || plain.MountList() != nil {
		t.Fatal("a key without mounts equals one with them")
	}
	ro := NewKey("shell", "process", []string{"filesystem"}).WithMounts([]Mount{{Source: "/srv/a"}, {Source: "/srv/b", Target: "/workspace"}})
	if ro == k1 {
		t.Fatal("a read-only workspace shares a key with a writable one")
	}
	if s := k1.String(); strings.Contains(s, "/srv") || !strings.Contains(s, "+mounts:") {
		t.Fatalf("String() = %q: want mounts as a hash, no paths", s)
	}
	if NewKey("shell", "process", nil).WithMounts(nil).Mounts != "" {
		t.Fatal("no mounts must leave the key as it was")
	}
}

func TestProcessRunnerRefusesMounts(t *testing.T) {
	r := &ProcessRunner{Path: "/bin/true"}
	_, err := r.ClientConfig(context.Background(), NewKey("shell", "process", nil).WithMounts([]Mount{{Source: "/srv/a"}}))
	if errdefs.CodeOf(err) != errdefs.Unavailable || !strings.Contains(err.Error(), "sandbox") {
		t.Fatalf("ClientConfig with mounts = %v, want unavailable naming the sandbox", err)
	}
	if _, err := r.ClientConfig(context.Background(), NewKey("shell", "process", nil)); err != nil {
		t.Fatal(err)
	}
}
