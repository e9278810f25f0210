package catalog

import (
	"context"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/principal"
)

// WithAgentCaps bounds what agents keep in the catalog: one worker's
// agents at most tools tools (those in the catalog its worker_tools rows
// name), and an
// agent's change takes a tool to at most version versions (every version
// is kept). Zero leaves a bound off; a person's changes are held to
// neither (worker_limits.tools and versions in the daemon's config).
func WithAgentCaps(tools, versions int) Option {
	return func(o *options) { o.maxTools, o.maxVersions = tools, versions }
}

// checkToolCap refuses an agent's new tool past its worker's tool cap.
// It counts before the create: creates racing each other may pass the
// cap by the few in flight.
func (c *Catalog) checkToolCap(ctx context.Context, caller principal.Caller) error {
	if c.opts.maxTools <= 0 || creator(caller) != CreatedByLLM || caller.Worker == "" {
		return nil
	}
	have, err := c.st.CountWorkerTools(ctx, caller.Worker)
	if err != nil {
		return storeErr("", err)
	}
	if have >= c.opts.maxTools {
		return errdefs.LimitError(errdefs.LimitTools, "worker %q's agents have made %d tools, their most (worker_limits.tools); delete one first",
			caller.Worker, have)
	}
	return nil
}

// checkVersionCap refuses an agent's change that would take cur past the
// version cap.
func (c *Catalog) checkVersionCap(cur *Tool, caller principal.Caller) error {
	if c.opts.maxVersions <= 0 || creator(caller) != CreatedByLLM || cur.Version < c.opts.maxVersions {
		return nil
	}
	return errdefs.LimitError(errdefs.LimitTools, "tool %q is at version %d, the most an agent's change may take it to (worker_limits.versions); "+
		"make a new tool, or ask a person to change this one", cur.Def.Name, cur.Version)
}
