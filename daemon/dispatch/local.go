package dispatch

import (
	"context"
	"errors"
	"time"

	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/toolspec"
)

// Defaults of a local call's limits, where neither the config
// (Config.Limits, by kind) nor the tool sets one.
const (
	DefaultLocalTimeout     = 30 * time.Second
	DefaultLocalOutputBytes = 1 << 20
)

// localLimits are the default limits of a local kind's calls.
func (d *Dispatcher) localLimits(k toolspec.Kind) executors.Limits {
	l := d.cfg.Limits[k]
	if l.Timeout <= 0 {
		l.Timeout = DefaultLocalTimeout
	}
	if l.OutputBytes <= 0 {
		l.OutputBytes = DefaultLocalOutputBytes
	}
	return l
}

// runLocal runs a call of a kind.Local in the daemon, under what an
// executor would hold it to: the call's timeout ends its context (and a
// Run that returns after it is a timeout all the same), and its result
// and logs are held to the output limit the way the JS executor holds
// them. It returns what an executor would, so execute scrubs and records
// it the same way.
func (d *Dispatcher) runLocal(ctx context.Context, c *call, p *plan) (*executors.Result, error) {
	lim := p.req.Limits
	rctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	start := d.now()
	wname := ""
	if c.worker != nil {
		wname = c.worker.Name
	}
	r, err := p.local.Run(rctx, &kind.LocalCall{Env: &d.env, Caller: c.caller, Worker: wname,
		Tool: p.tool, Args: c.args, Defaults: p.defaults, Limits: lim, Catalog: d.agentCatalogFor(c)})
	if errors.Is(rctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil && !errdefs.Is(err, errdefs.Timeout) {
		return nil, errdefs.LimitError(errdefs.LimitTimeout, "%s: call exceeded its %v time limit", c.kind, lim.Timeout)
	}
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, errdefs.Errorf(errdefs.Internal, "%s: no result", c.kind)
	}
	out := &executors.Result{Value: r.Value, IsError: r.IsError, Error: r.Error, Duration: d.now().Sub(start)}
	if n := int64(len(out.Value)); n > lim.OutputBytes {
		return nil, errdefs.LimitError(errdefs.LimitOutput, "%s: result is %d bytes, over the %d-byte output limit", c.kind, n, lim.OutputBytes)
	}
	used := int64(len(out.Value))
	for _, l := range r.Logs {
		if used+int64(len(l.Message)) > lim.OutputBytes {
			out.Truncated = true
			break
		}
		used += int64(len(l.Message))
		out.Logs = append(out.Logs, executors.LogLine{Level: l.Level, Message: l.Message})
	}
	out.OutputBytes = used
	return out, nil
}
