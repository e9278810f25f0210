package daemon

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/policy"
	"github.com/toolcage/toolcage/principal"
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

// callerProfiles is the dispatcher's view: the profiles and who is mapped
// to which. A nil *callerProfiles has no profiles.
type callerProfiles struct {
	set     *policy.Profiles
	callers map[string]string // lowercased caller id or worker → profile
}

func newCallerProfiles(c ProfilesConfig) *callerProfiles {
	cp := &callerProfiles{set: c.ToolProfiles(), callers: make(map[string]string, len(c.Callers))}
	for k, v := range c.Callers {
		cp.callers[strings.ToLower(k)] = strings.ToLower(v)
	}
	return cp
}

// of lists the profiles caller is held to after the global one: mapped by
// caller id, mapped by worker, asked for in the request.
func (cp *callerProfiles) of(caller principal.Caller) []string {
	var out []string
	add := func(p string) {
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if cp != nil {
		add(cp.callers[strings.ToLower(caller.ID)])
		if caller.Worker != "" {
			add(cp.callers[strings.ToLower(caller.Worker)])
		}
	}
	add(strings.ToLower(caller.Profile))
	return out
}

// known reports an error for a profile name no config defines.
func (cp *callerProfiles) known(name string) error {
	name = strings.ToLower(name)
	if name == "" || (cp != nil && cp.set.Has(name)) {
		return nil
	}
	var names []string
	if cp != nil {
		names = cp.set.Names()
	}
	return errdefs.Errorf(errdefs.InvalidRequest, "no tool profile named %q (defined: %s)", name, orNone(names))
}

// allows decides whether caller may use the tool def describes under its
// profiles; nil means it may. A Profile the config does not define is
// invalid_request.
func (cp *callerProfiles) allows(def *catalog.Definition, caller principal.Caller) error {
	if err := cp.known(caller.Profile); err != nil {
		return err
	}
	profiles := cp.of(caller)
	var set *policy.Profiles
	if cp != nil {
		set = cp.set
	}
	if set == nil && len(profiles) == 0 {
		return nil
	}
	ok, by, reason := set.Check(def.Name, def.Category, profiles...)
	if ok {
		return nil
	}
	return errdefs.Errorf(errdefs.PolicyDenied, "tool %q is not in the effective tool set of profile %q: %s", def.Name, by, reason)
}

// checkProfile refuses a call of a tool outside the caller's profiles.
func (d *Dispatcher) checkProfile(def *catalog.Definition, caller principal.Caller) error {
	return d.profiles.allows(def, caller)
}

// listTools lists the catalog as f asks, keeping only the tools profile
// (after the global profile) allows when profile is not empty; limit,
// offset and the total then count the allowed tools only.
func (d *Daemon) listToolsForProfile(ctx context.Context, f catalog.Filter, profile string) ([]*catalog.Tool, int, error) {
	if profile == "" {
		return d.catalog.List(ctx, f)
	}
	cp := d.disp.profiles
	if err := cp.known(profile); err != nil {
		return nil, 0, err
	}
	limit, offset := f.Limit, f.Offset
	f.Limit, f.Offset = 0, 0
	all, _, err := d.catalog.List(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	var kept []*catalog.Tool
	for _, t := range all {
		if ok, _, _ := cp.set.Check(t.Def.Name, t.Def.Category, strings.ToLower(profile)); ok {
			kept = append(kept, t)
		}
	}
	total := len(kept)
	kept = kept[min(offset, total):]
	if limit > 0 && limit < len(kept) {
		kept = kept[:limit]
	}
	return kept, total, nil
}
