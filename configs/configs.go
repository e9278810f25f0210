// Package configs embeds the daemon's default configuration and rule files
// so that `toolcage daemon` runs with no file at all.
package configs

import _ "embed"

// DefaultDaemon is configs/toolcage.yaml.
//
//go:embed toolcage.yaml
var DefaultDaemon []byte

// ShellRules is configs/shell_rules.yaml, the built-in shell deny rules.
//
//go:embed shell_rules.yaml
var ShellRules []byte
