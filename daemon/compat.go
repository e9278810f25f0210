package daemon

import (
	"github.com/toolcage/toolcage/daemon/config"
	"github.com/toolcage/toolcage/daemon/dispatch"
)

// The configuration lives in daemon/config, the call pipeline in
// daemon/dispatch; these names keep the daemon's callers (cmd/toolcage,
// the benchmarks, the tests) reading as before.

// Rendering is what `toolcage tools render` shows (dispatch.Rendering).
type Rendering = dispatch.Rendering

// Config is the daemon configuration (config.Config).
type Config = config.Config

// The sections callers set by name.
type (
	LogConfig        = config.LogConfig
	ProfilesConfig   = config.ProfilesConfig
	ProfileConfig    = config.ProfileConfig
	ToolGroupConfig  = config.ToolGroupConfig
	ShellRulesConfig = config.ShellRulesConfig
	ScrubRuleConfig  = config.ScrubRuleConfig
)

// LoadConfig reads the config file (config.Load), for this build.
func LoadConfig(file string, overrides map[string]any) (Config, error) {
	c, err := config.Load(file, overrides)
	c.Version = Version
	return c, err
}

// DefaultSocketPath is where client and daemon find the socket by default.
func DefaultSocketPath() string { return config.DefaultSocketPath() }

// CheckSocketDir refuses a socket in a per-user directory someone else made.
func CheckSocketDir(socket string) error { return config.CheckSocketDir(socket) }
