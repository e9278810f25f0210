package config

import (
	"fmt"
	"sort"
	"strings"

	"github.com/toolcage/toolcage/policy"
)

// Tool profiles: which tools each caller may use at all (policy.Profiles).
//
// The pipeline for one call: the global profile, then the profile the
// config maps the caller id to, then the one it maps the worker to, then
// the profile the request names in Toolcage-Profile. Each that applies
// must allow the tool, so a request header can only narrow what a caller
// may use. Names in the config are case-insensitive (the config loader
// lowercases map keys), so caller ids, workers and profile names are
// compared lowercased; a caller id or worker holding a dot cannot be a key.

// ProfilesConfig is the `profiles:` section.
type ProfilesConfig struct {
	// Global is the profile every caller is held to; "" means none.
	Global   string                     `mapstructure:"global"`
	Groups   map[string]ToolGroupConfig `mapstructure:"groups"`
	Profiles map[string]ProfileConfig   `mapstructure:"profiles"`
	// Callers maps a caller id or worker name to a profile name.
	Callers map[string]string `mapstructure:"callers"`
}

// ToolGroupConfig is one tool group: tools by category and by name.
type ToolGroupConfig struct {
	Categories []string `mapstructure:"categories"`
	Tools      []string `mapstructure:"tools"`
}

// ProfileConfig is one profile; entries are tool names, group:NAME or *.
type ProfileConfig struct {
	Allow     []string `mapstructure:"allow"`
	Deny      []string `mapstructure:"deny"`
	AlsoAllow []string `mapstructure:"also_allow"`
}

// ToolProfiles converts the section for policy; nil when no profile is
// defined and none is applied.
func (c *ProfilesConfig) ToolProfiles() *policy.Profiles {
	if len(c.Profiles) == 0 && len(c.Groups) == 0 && c.Global == "" {
		return nil
	}
	lowerGroups := func(list []string) []string {
		out := make([]string, len(list))
		for i, e := range list {
			if strings.HasPrefix(strings.ToLower(e), policy.GroupPrefix) {
				e = strings.ToLower(e)
			}
			out[i] = e
		}
		return out
	}
	p := &policy.Profiles{Groups: map[string]policy.ToolGroup{}, Profiles: map[string]policy.Profile{}, Global: strings.ToLower(c.Global)}
	for n, g := range c.Groups {
		p.Groups[strings.ToLower(n)] = policy.ToolGroup{Categories: g.Categories, Tools: g.Tools}
	}
	for n, pr := range c.Profiles {
		p.Profiles[strings.ToLower(n)] = policy.Profile{Allow: lowerGroups(pr.Allow), Deny: lowerGroups(pr.Deny), AlsoAllow: lowerGroups(pr.AlsoAllow)}
	}
	return p
}

// check validates the section for Config.finish.
func (c *ProfilesConfig) check() []error {
	p := c.ToolProfiles()
	var errs []error
	if err := p.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("profiles: %w", err))
	}
	keys := make([]string, 0, len(c.Callers))
	for k := range c.Callers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !p.Has(strings.ToLower(c.Callers[k])) {
			errs = append(errs, fmt.Errorf("profiles.callers: %q maps to profile %q, which is not defined (known: %s)",
				k, c.Callers[k], orNone(p.Names())))
		}
	}
	return errs
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// CallerProfiles returns the profile each lowercased caller id or worker is
// mapped to, lowercased.
func (c *ProfilesConfig) CallerProfiles() map[string]string {
	out := make(map[string]string, len(c.Callers))
	for k, v := range c.Callers {
		out[strings.ToLower(k)] = strings.ToLower(v)
	}
	return out
}
