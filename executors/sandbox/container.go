package sandbox

// Container mode: the executor binary is pid 1 of a container (the docker
// runner's). The engine made the namespaces, cgroup, read-only root and
// tmpfs mounts; what is left for pid 1 is what the launcher does in a
// process sandbox after them: fork the executor, reap orphans, and serve
// the daemon's reset (strays killed, /tmp and the work dir wiped, the
// cgroup's memory and pids events reported) over a control socket in the
// bind-mounted socket dir.
const (
	stageContainer = "container"
	// EnvContainerControl is the path pid 1 listens on for the daemon.
	EnvContainerControl = "TOOLCAGE_CONTAINER_CONTROL"
	// EnvContainerWorkDir is the work dir pid 1 wipes.
	EnvContainerWorkDir = "TOOLCAGE_CONTAINER_WORKDIR"
)

// ContainerEnv is the environment that makes the executor binary start
// as a container's pid 1, listening on control.
func ContainerEnv(control, workDir string) []string {
	// (TOOLCAGE_SANDBOX is envStage, named here for every platform.)
	return []string{"TOOLCAGE_SANDBOX=" + stageContainer, EnvContainerControl + "=" + control, EnvContainerWorkDir + "=" + workDir}
}

// ContainerReply is pid 1's answer to a request (reset, stat), as the
// daemon reads it.
type ContainerReply struct {
	OK  bool   `json:"ok"`
	Err string `json:"err,omitempty"`
	// Limit is "memory" or "pids" when the cgroup's OOM-kill or pids.max
	// counter rose since the last reset: the call broke that limit.
	Limit string `json:"limit,omitempty"`
	// CPUMillis is the executor's CPU time so far.
	CPUMillis int64 `json:"cpu_ms,omitempty"`
	// Stats answers "stat": what is mounted at each path asked, as pid 1
	// sees it.
	Stats []MountStat `json:"stats,omitempty"`
}
