package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// OwnerLabel names this process for LabelOwner: host name, pid and the
// pid's start time (so a reused pid is not taken for the daemon).
func OwnerLabel() string {
	host, _ := os.Hostname()
	return host + "/" + strconv.Itoa(os.Getpid()) + "/" + strconv.FormatInt(procStart(os.Getpid()), 10)
}

// procStart is pid's start time in clock ticks since boot, 0 if gone.
func procStart(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	// After the comm: state is field 3 of stat, starttime field 22.
	if len(f) < 20 {
		return 0
	}
	v, _ := strconv.ParseInt(f[19], 10, 64)
	return v
}

// ownerAlive reports whether the daemon an owner label names still runs.
// Containers of another host's daemons are never taken for orphans.
func ownerAlive(owner string) bool {
	f := strings.Split(owner, "/")
	host, _ := os.Hostname()
	if len(f) != 3 || f[0] != host {
		return true
	}
	pid, err1 := strconv.Atoi(f[1])
	start, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 {
		return true
	}
	if syscall.Kill(pid, 0) == syscall.ESRCH {
		return false
	}
	return procStart(pid) == start
}

// CleanOrphans removes the executor containers of toolcage daemons of this
// host that are gone (crashed, killed): their containers carry the labels
// and no daemon will ever use them. It returns how many it removed.
func CleanOrphans(ctx context.Context, cli *client.Client) (int, error) {
	n := 0
	err := removeContainers(ctx, cli, LabelOwner, func(c container.Summary) bool {
		if ownerAlive(c.Labels[LabelOwner]) {
			return false
		}
		n++
		return true
	})
	return n, err
}

// removeContainers force-removes every container (running or not) that
// carries label (key or key=value) and that pick accepts.
func removeContainers(ctx context.Context, cli *client.Client, label string, pick func(container.Summary) bool) error {
	res, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", label)})
	if err != nil {
		return fmt.Errorf("docker ps: %w", err)
	}
	var errs []error
	for _, c := range res.Items {
		if !pick(c) {
			continue
		}
		if _, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true}); err != nil && !cerrdefs.IsNotFound(err) && !cerrdefs.IsConflict(err) {
			errs = append(errs, fmt.Errorf("docker rm %.12s: %w", c.ID, err))
		}
	}
	return errors.Join(errs...)
}

// ownedByMe reports whether fi belongs to the daemon's uid.
func ownedByMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
