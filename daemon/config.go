// Package daemon is the toolcage server: its configuration and lifecycle,
// the socket API, and the dispatcher that takes one call from request to
// audit record.
package daemon

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"

	"github.com/toolcage/toolcage/configs"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/executors/image"
	"github.com/toolcage/toolcage/executors/sandbox"
	"github.com/toolcage/toolcage/policy"
	"github.com/toolcage/toolcage/policy/netguard"
	"github.com/toolcage/toolcage/policy/scrub"
)

// Config is the daemon configuration; see configs/toolcage.yaml.
type Config struct {
	// File is the config file read (LoadConfig's), absolute; "" for the
	// embedded defaults alone. Not a key: no workspace or mount may make it
	// writable to an agent (mountGuard).
	File            string          `mapstructure:"-"`
	Socket          string          `mapstructure:"socket"`
	DataDir         string          `mapstructure:"data_dir"`
	Log             LogConfig       `mapstructure:"log"`
	ShutdownTimeout time.Duration   `mapstructure:"shutdown_timeout"`
	API             APIConfig       `mapstructure:"api"`
	Approvals       ApprovalsConfig `mapstructure:"approvals"`
	Executor        ExecutorConfig  `mapstructure:"executor"`
	JS              JSConfig        `mapstructure:"js"`
	Shell           ShellConfig     `mapstructure:"shell"`
	HTTP            HTTPConfig      `mapstructure:"http"`
	Sandbox         SandboxConfig   `mapstructure:"sandbox"`
	RateLimits      RateLimits      `mapstructure:"rate_limits"`
	Secrets         SecretsConfig   `mapstructure:"secrets"`
	Profiles        ProfilesConfig  `mapstructure:"profiles"`
	Scrub           ScrubConfig     `mapstructure:"scrub"`
	Agents          AgentsConfig    `mapstructure:"agents"`
	Metrics         MetricsConfig   `mapstructure:"metrics"`
	Audit           AuditConfig     `mapstructure:"audit"`
	UI              UIConfig        `mapstructure:"ui"`
	MCP             MCPConfig       `mapstructure:"mcp"`
	// WorkerLimits bound what one worker's agents take (limits.go).
	WorkerLimits WorkerLimitsConfig `mapstructure:"worker_limits"`
	// Isolation is the isolation of tools that name none: process | docker.
	Isolation string       `mapstructure:"isolation"`
	Docker    DockerConfig `mapstructure:"docker"`
}

// DockerConfig sets how `isolation: docker` executors run. The engine is
// the one DOCKER_HOST (and DOCKER_TLS_VERIFY, DOCKER_CERT_PATH) names.
type DockerConfig struct {
	// Image is the executor image's tag; empty: toolcage-executor:<version>.
	Image string `mapstructure:"image"`
	// ImageID pins the image: the daemon refuses another image under the tag.
	ImageID string `mapstructure:"image_id"`
	// Runtime is the OCI runtime of the containers (runsc for gVisor);
	// empty: the engine's default.
	Runtime string `mapstructure:"runtime"`
}

// DockerImage is the executor image's tag.
func (c *Config) DockerImage() string {
	if c.Docker.Image != "" {
		return c.Docker.Image
	}
	return image.Tag(Version)
}

// MCPConfig sets the MCP server: the stdio bridge (`toolcage mcp`) always
// reaches it over the socket; Listen also serves streamable HTTP.
type MCPConfig struct {
	// Listen is a loopback host:port serving /mcp/{worker}; "" is off.
	Listen string `mapstructure:"listen"`
	// SessionTimeout drops a streamable HTTP session idle this long.
	SessionTimeout time.Duration `mapstructure:"session_timeout"`
	// ProgressInterval is how often a call waiting for approval sends
	// progress to a client that asked for it.
	ProgressInterval time.Duration `mapstructure:"progress_interval"`
	// MaxUnauthenticated caps the connections to Listen no request with a
	// valid token has come on yet; a new one closes the oldest.
	MaxUnauthenticated int `mapstructure:"max_unauthenticated"`
	// HeaderTimeout bounds the wait for a request's headers on Listen.
	HeaderTimeout time.Duration `mapstructure:"header_timeout"`
}

// MetricsConfig says where else than GET /v1/metrics on the socket the
// Prometheus metrics are served.
type MetricsConfig struct {
	// Listen is a loopback host:port serving GET /metrics; "" is off.
	Listen string `mapstructure:"listen"`
}

// AgentsConfig holds the rules for tools an llm caller makes.
type AgentsConfig struct {
	// AlwaysPending makes every tool an agent creates or changes wait for
	// a person, even JavaScript with no permissions and no secrets.
	AlwaysPending bool `mapstructure:"always_pending"`
}

// ScrubConfig adds credential formats of one's own to the scrubber's
// built-in and gitleaks rules.
type ScrubConfig struct {
	Rules []ScrubRuleConfig `mapstructure:"rules"`
}

// ScrubRuleConfig is one extra credential format (see scrub.Rule).
type ScrubRuleConfig struct {
	Kind        string   `mapstructure:"kind"`
	Pattern     string   `mapstructure:"pattern"`
	SecretGroup int      `mapstructure:"secret_group"`
	Keywords    []string `mapstructure:"keywords"`
	MinEntropy  float64  `mapstructure:"min_entropy"`
}

// ScrubRules converts the extra rules for scrub.New.
func (c *Config) ScrubRules() []scrub.Rule {
	out := make([]scrub.Rule, 0, len(c.Scrub.Rules))
	for _, r := range c.Scrub.Rules {
		out = append(out, scrub.Rule{Kind: r.Kind, Pattern: r.Pattern, SecretGroup: r.SecretGroup, Keywords: r.Keywords, MinEntropy: r.MinEntropy})
	}
	return out
}

// SecretsConfig sets where the key that encrypts stored secrets lives.
type SecretsConfig struct {
	// KeyFile holds the 32-byte key, created (mode 0600) on first start.
	// Empty: <data_dir>/secrets.key. TOOLCAGE_SECRETS_KEY_FILE, or else
	// TOOLCAGE_MASTER_KEY_FILE, sets it from the environment.
	KeyFile string `mapstructure:"key_file"`
}

// RateLimits configures the per-call token buckets and concurrency caps.
type RateLimits struct {
	PerCallerTool   policy.RateLimit            `mapstructure:"per_caller_tool"`
	PerTool         policy.RateLimit            `mapstructure:"per_tool"`
	PerCaller       policy.RateLimit            `mapstructure:"per_caller"`
	Tools           map[string]policy.RateLimit `mapstructure:"tools"`
	Concurrency     int                         `mapstructure:"concurrency"`
	ToolConcurrency map[string]int              `mapstructure:"tool_concurrency"`
}

// RateLimitConfig converts the settings for policy.NewRateLimiter.
func (c *Config) RateLimitConfig() policy.RateLimitConfig {
	r := c.RateLimits
	return policy.RateLimitConfig{PerCallerTool: r.PerCallerTool, PerTool: r.PerTool, PerCaller: r.PerCaller,
		Tools: r.Tools, Concurrency: r.Concurrency, ToolConcurrency: r.ToolConcurrency}
}

// APIConfig bounds what one client can hold of the socket API.
type APIConfig struct {
	// BodyTimeout is how long a client may take to send a request body,
	// counted from the end of its headers.
	BodyTimeout time.Duration `mapstructure:"body_timeout"`
	// IdleTimeout closes a keep-alive connection with no request.
	IdleTimeout time.Duration `mapstructure:"idle_timeout"`
	// MaxConnections caps open connections; more wait to be accepted.
	MaxConnections int `mapstructure:"max_connections"`
	// PersonConnections of MaxConnections are kept for the person:
	// workers' agents hold the rest at most.
	PersonConnections int `mapstructure:"person_connections"`
	// WorkerConnections caps the connections one worker's agents hold
	// (MCP bridges, token requests), on the socket and on mcp.listen.
	WorkerConnections int `mapstructure:"worker_connections"`
}

// SandboxConfig sets the process sandbox.
type SandboxConfig struct {
	Enabled           bool               `mapstructure:"enabled"`
	Memory            string             `mapstructure:"memory"`
	Pids              int                `mapstructure:"pids"`
	CPUSeconds        int                `mapstructure:"cpu_seconds"`
	CPUs              float64            `mapstructure:"cpus"`
	CgroupParent      string             `mapstructure:"cgroup_parent"`
	FileSize          string             `mapstructure:"file_size"`
	OpenFiles         int                `mapstructure:"open_files"`
	TmpSize           string             `mapstructure:"tmp_size"`
	Require           SandboxRequirement `mapstructure:"require"`
	NetworkShellTools []string           `mapstructure:"network_shell_tools"`
}

// SandboxRequirement names protections the daemon will not run without.
type SandboxRequirement struct {
	Cgroup      bool `mapstructure:"cgroup"`
	LandlockABI int  `mapstructure:"landlock_abi"`
	Seccomp     bool `mapstructure:"seccomp"`
}

// SandboxConfig converts the sandbox settings for the runner.
func (c *Config) SandboxConfig() sandbox.Config {
	mem, _ := catalog.ParseByteSize(c.Sandbox.Memory)
	fsize, _ := catalog.ParseByteSize(c.Sandbox.FileSize)
	tmp, _ := catalog.ParseByteSize(c.Sandbox.TmpSize)
	return sandbox.Config{
		MemoryBytes: mem, Pids: c.Sandbox.Pids, CPUSeconds: c.Sandbox.CPUSeconds, CPUs: c.Sandbox.CPUs,
		CgroupParent:  c.Sandbox.CgroupParent,
		FileSizeBytes: fsize, OpenFiles: c.Sandbox.OpenFiles, TmpBytes: tmp,
		Require: sandbox.Requirements{Cgroup: c.Sandbox.Require.Cgroup, LandlockABI: c.Sandbox.Require.LandlockABI, Seccomp: c.Sandbox.Require.Seccomp},
	}
}

// ShellConfig holds shell tool defaults and the deny-rule settings.
type ShellConfig struct {
	Timeout time.Duration    `mapstructure:"timeout"`
	Output  string           `mapstructure:"output"`
	Rules   ShellRulesConfig `mapstructure:"rules"`
}

// ShellRulesConfig switches deny-rule groups off and adds rules.
type ShellRulesConfig struct {
	DisabledGroups []string         `mapstructure:"disabled_groups"`
	Extra          []map[string]any `mapstructure:"extra"`
}

// HTTPConfig holds HTTP tool defaults and the network guard's settings.
type HTTPConfig struct {
	Timeout           time.Duration `mapstructure:"timeout"`
	MaxResponseBytes  string        `mapstructure:"max_response_bytes"`
	AllowPrivateHosts []string      `mapstructure:"allow_private_hosts"`
}

// LogConfig sets the daemon's log output.
type LogConfig struct {
	Level  string `mapstructure:"level"`
	Format string `mapstructure:"format"`
}

// ExecutorConfig sets the executor pool.
type ExecutorConfig struct {
	Path           string        `mapstructure:"path"`
	MaxPerKey      int           `mapstructure:"max_per_key"`
	MinIdle        int           `mapstructure:"min_idle"`
	IdleTimeout    time.Duration `mapstructure:"idle_timeout"`
	AcquireTimeout time.Duration `mapstructure:"acquire_timeout"`
	Prewarm        []string      `mapstructure:"prewarm"`
}

// JSConfig holds the default limits of JavaScript calls.
type JSConfig struct {
	Timeout time.Duration `mapstructure:"timeout"`
	Memory  string        `mapstructure:"memory"`
	Output  string        `mapstructure:"output"`
	// MaxCallDepth bounds nested calls (utils.callTool): how many calls
	// deep a chain may go below the call a client made.
	MaxCallDepth int `mapstructure:"max_call_depth"`
}

// maxCallDepth bounds js.max_call_depth: each level of a chain holds an
// executor while it waits.
const maxCallDepth = 16

// LoadConfig reads the embedded defaults, then file (if not empty), then
// TOOLCAGE_* environment variables, then overrides (flag values keyed like
// "socket" or "executor.path"). Unknown keys in file are errors.
func LoadConfig(file string, overrides map[string]any) (Config, error) {
	where := "config"
	if file != "" {
		where = "config " + file
	}
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(configs.DefaultDaemon)); err != nil {
		return Config{}, fmt.Errorf("embedded config: %w", err)
	}
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return Config{}, fmt.Errorf("config: %w", err)
		}
		if err := v.MergeConfig(bytes.NewReader(data)); err != nil {
			return Config{}, fmt.Errorf("%s: %w", where, trimViper(err))
		}
	}
	v.SetEnvPrefix("TOOLCAGE")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	// The key file also answers to the older TOOLCAGE_MASTER_KEY_FILE; the
	// first name set wins.
	if err := v.BindEnv("secrets.key_file", "TOOLCAGE_SECRETS_KEY_FILE", "TOOLCAGE_MASTER_KEY_FILE"); err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	for k, val := range overrides {
		v.Set(k, val)
	}
	var c Config
	hook := mapstructure.ComposeDecodeHookFunc(mapstructure.StringToTimeDurationHookFunc(), mapstructure.StringToSliceHookFunc(","))
	if err := v.UnmarshalExact(&c, viper.DecodeHook(hook)); err != nil {
		return Config{}, configError(where, err)
	}
	if err := c.finish(where); err != nil {
		return Config{}, err
	}
	if file != "" {
		abs, err := filepath.Abs(file)
		if err != nil {
			return Config{}, fmt.Errorf("config: %w", err)
		}
		c.File = abs
	}
	return c, nil
}

// finish fills derived defaults and validates; where prefixes the errors.
func (c *Config) finish(where string) error {
	if c.Socket == "" {
		c.Socket = DefaultSocketPath()
	}
	if c.DataDir == "" {
		c.DataDir = DefaultDataDir()
	}
	if c.Secrets.KeyFile == "" {
		c.Secrets.KeyFile = filepath.Join(c.DataDir, "secrets.key")
	}
	var errs []error
	if c.ShutdownTimeout <= 0 {
		errs = append(errs, errors.New("shutdown_timeout must be positive"))
	}
	if err := checkLoopbackListen("metrics.listen", c.Metrics.Listen, "127.0.0.1:9464"); err != nil {
		errs = append(errs, err)
	}
	if err := checkLoopbackListen("mcp.listen", c.MCP.Listen, "127.0.0.1:8765"); err != nil {
		errs = append(errs, err)
	}
	if err := netguard.CheckPrivateHosts(c.HTTP.AllowPrivateHosts); err != nil {
		errs = append(errs, fmt.Errorf("http.allow_private_hosts: %w", err))
	}
	if c.MCP.SessionTimeout <= 0 || c.MCP.ProgressInterval <= 0 {
		errs = append(errs, errors.New("mcp.session_timeout and mcp.progress_interval must be positive"))
	}
	for i, r := range c.ScrubRules() {
		if err := scrub.CheckRule(r); err != nil {
			errs = append(errs, fmt.Errorf("scrub.rules[%d]: %w", i, err))
		}
	}
	if c.API.BodyTimeout <= 0 || c.API.IdleTimeout <= 0 {
		errs = append(errs, errors.New("api.body_timeout and api.idle_timeout must be positive"))
	}
	if c.API.MaxConnections <= 0 {
		errs = append(errs, errors.New("api.max_connections must be positive"))
	}
	if c.API.PersonConnections < 1 || c.API.PersonConnections >= c.API.MaxConnections {
		errs = append(errs, fmt.Errorf("api.person_connections: want 1 to api.max_connections-1, got %d", c.API.PersonConnections))
	}
	if c.API.WorkerConnections < 1 {
		errs = append(errs, errors.New("api.worker_connections must be at least 1"))
	}
	if c.MCP.MaxUnauthenticated < 1 || c.MCP.HeaderTimeout <= 0 {
		errs = append(errs, errors.New("mcp.max_unauthenticated must be at least 1 and mcp.header_timeout positive"))
	}
	errs = append(errs, c.Approvals.check()...)
	if r := c.Audit.Retention; r < 0 || (r > 0 && r < minRetention) {
		errs = append(errs, fmt.Errorf("audit.retention: want 0 (keep everything) or at least %s, like 720h, got %s", minRetention, r))
	}
	if c.Executor.MaxPerKey <= 0 {
		errs = append(errs, errors.New("executor.max_per_key must be positive"))
	}
	if c.Executor.MinIdle < 0 {
		errs = append(errs, errors.New("executor.min_idle must not be negative"))
	}
	for _, k := range c.Executor.Prewarm {
		if !executors.Kind(k).Valid() {
			errs = append(errs, fmt.Errorf("executor.prewarm: unknown kind %q", k))
		}
	}
	if c.JS.Timeout <= 0 {
		errs = append(errs, errors.New("js.timeout must be positive"))
	}
	if c.JS.MaxCallDepth < 1 || c.JS.MaxCallDepth > maxCallDepth {
		errs = append(errs, fmt.Errorf("js.max_call_depth must be between 1 and %d, got %d", maxCallDepth, c.JS.MaxCallDepth))
	}
	if c.Shell.Timeout <= 0 {
		errs = append(errs, errors.New("shell.timeout must be positive"))
	}
	if c.HTTP.Timeout <= 0 {
		errs = append(errs, errors.New("http.timeout must be positive"))
	}
	for key, s := range map[string]string{"js.memory": c.JS.Memory, "js.output": c.JS.Output,
		"shell.output": c.Shell.Output, "http.max_response_bytes": c.HTTP.MaxResponseBytes,
		"sandbox.memory": c.Sandbox.Memory, "sandbox.file_size": c.Sandbox.FileSize, "sandbox.tmp_size": c.Sandbox.TmpSize} {
		if n, err := catalog.ParseByteSize(s); err != nil || n <= 0 {
			errs = append(errs, fmt.Errorf("%s: want a positive size like \"64MiB\", got %q", key, s))
		}
	}
	if c.Sandbox.CPUs <= 0 || c.Sandbox.CPUs > 1024 {
		errs = append(errs, fmt.Errorf("sandbox.cpus: want a number of CPUs above 0, like 1 or 0.5, got %v", c.Sandbox.CPUs))
	}
	if err := sandbox.CheckCgroupParent(c.Sandbox.CgroupParent); err != nil {
		errs = append(errs, fmt.Errorf("sandbox.cgroup_parent: %w", err))
	}
	switch c.Isolation {
	case catalog.IsolationProcess, catalog.IsolationDocker:
	default:
		errs = append(errs, fmt.Errorf("isolation: unknown isolation %q (want process or docker)", c.Isolation))
	}
	if id := c.Docker.ImageID; id != "" && !validImageID(id) {
		errs = append(errs, fmt.Errorf("docker.image_id: want the ID `toolcage image build` prints (sha256:<64 hex digits>), got %q", id))
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("log.level: unknown level %q", c.Log.Level))
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		errs = append(errs, fmt.Errorf("log.format: unknown format %q", c.Log.Format))
	}
	errs = append(errs, c.Profiles.check()...)
	errs = append(errs, c.UI.check()...)
	errs = append(errs, c.WorkerLimits.check(c.Executor.MaxPerKey)...)
	if len(errs) > 0 {
		return fmt.Errorf("%s: %w", where, errors.Join(errs...))
	}
	return nil
}

// validImageID accepts "sha256:<64 hex>" or the bare 64 hex digits.
func validImageID(id string) bool {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) != 64 {
		return false
	}
	for _, r := range id {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}

// JSLimits returns the JavaScript defaults as executor limits.
func (c *Config) JSLimits() executors.Limits {
	mem, _ := catalog.ParseByteSize(c.JS.Memory)
	out, _ := catalog.ParseByteSize(c.JS.Output)
	return executors.Limits{Timeout: c.JS.Timeout, MemoryBytes: mem, OutputBytes: out, Requests: 10}
}

// ShellLimits returns the shell defaults as executor limits.
func (c *Config) ShellLimits() executors.Limits {
	out, _ := catalog.ParseByteSize(c.Shell.Output)
	return executors.Limits{Timeout: c.Shell.Timeout, OutputBytes: out}
}

// HTTPLimits returns the HTTP defaults as executor limits.
func (c *Config) HTTPLimits() executors.Limits {
	out, _ := catalog.ParseByteSize(c.HTTP.MaxResponseBytes)
	return executors.Limits{Timeout: c.HTTP.Timeout, OutputBytes: out}
}

// DefaultDataDir is /var/lib/toolcage for root, else ~/.local/share/toolcage
// (or $XDG_DATA_HOME/toolcage).
func DefaultDataDir() string {
	if os.Geteuid() == 0 {
		return "/var/lib/toolcage"
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "toolcage")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "toolcage")
	}
	return filepath.Join(home, ".local", "share", "toolcage")
}
