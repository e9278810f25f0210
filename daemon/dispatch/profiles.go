package dispatch

import (
	"slices"
	"strings"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/worker"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/policy"
	"github.com/toolcage/toolcage/principal"
)

// Tool profiles: which tools each caller may use at all. For one call: the
// global profile, then the profile the config maps the caller id to, then
// the one it maps the worker to, then the one the caller asked for. Each
// that applies must allow the tool, so a request can only narrow what a
// caller may use. Names are compared lowercased.

// KnownProfile reports an invalid_request error for a profile name no
// config defines ("" is no profile and always known).
func (d *Dispatcher) KnownProfile(name string) error {
	name = strings.ToLower(name)
	if name == "" || d.cfg.Profiles.Has(name) {
		return nil
	}
	return errdefs.Errorf(errdefs.InvalidRequest, "no tool profile named %q (defined: %s)", name, orNone(d.cfg.Profiles.Names()))
}

// ProfileAllows reports whether profile (after the global one) allows the
// tool def describes; listings use it.
func (d *Dispatcher) ProfileAllows(def *catalog.Definition, profile string) bool {
	ok, _, _ := d.cfg.Profiles.Check(def.Name, def.Category, strings.ToLower(profile))
	return ok
}

// ProfilesAllow reports whether the caller's profiles and its worker's
// (w, nil for none) let it call def: the definitions export lists only
// what would not be refused by profile.
func (d *Dispatcher) ProfilesAllow(def *catalog.Definition, caller principal.Caller, w *worker.Worker) bool {
	return d.profileAllows(def, caller, workerProfile(w)) == nil
}

// profileAllows refuses a call of a tool outside the caller's profiles
// and its worker's (workerProfile, "" for none).
func (d *Dispatcher) profileAllows(def *catalog.Definition, caller principal.Caller, workerProfile string) error {
	if err := d.KnownProfile(caller.Profile); err != nil {
		return err
	}
	profiles := policy.CallerProfiles(d.cfg.ProfileCallers, caller.ID, caller.Worker, caller.Profile)
	if workerProfile != "" && !slices.Contains(profiles, workerProfile) {
		profiles = append(profiles, workerProfile)
	}
	if err := policy.ProfileAllows(d.cfg.Profiles, profiles, def.Name, def.Category); err != nil {
		return &errdefs.Error{Code: errdefs.PolicyDenied, Err: err}
	}
	return nil
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// CallerMayUse reports whether every profile that applies to caller (the
// global one, those the config maps its id and worker to, its worker's
// own) allows the tool def describes: what a listing for that caller
// shows, so that it lists no tool a call would refuse on profile.
func (d *Dispatcher) CallerMayUse(def *catalog.Definition, caller principal.Caller) bool {
	w, err := d.workerOf(caller)
	if err != nil {
		return false
	}
	return d.profileAllows(def, caller, workerProfile(w)) == nil
}
