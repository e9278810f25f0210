// Package configs embeds the daemon's default configuration so that
// `toolcage daemon` runs with no file at all.
package configs

import _ "embed"

// DefaultDaemon is configs/toolcage.yaml.
//
//go:embed toolcage.yaml
var DefaultDaemon []byte
