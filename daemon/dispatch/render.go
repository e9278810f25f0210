package dispatch

import (
	"context"
	"encoding/json"

	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/policy/scrub"
	"github.com/toolcage/toolcage/policy/template"
)

// Rendering is what a call of a tool would run, without running it.
type Rendering struct {
	Tool    string                   `json:"tool"`
	Version int                      `json:"version"`
	Kind    executors.Kind           `json:"kind"`
	Shell   *template.ShellRendering `json:"shell,omitempty"`
	HTTP    *template.HTTPRendering  `json:"http,omitempty"`
}

// Render validates args and renders a stored tool's command or request,
// with every policy check a call would meet, and runs nothing.
func (d *Dispatcher) Render(ctx context.Context, name string, args json.RawMessage) (*Rendering, error) {
	res, err := d.cfg.Catalog.Resolve(ctx, name)
	if err != nil {
		return nil, err
	}
	def := res.Tool.Def
	args = normalArgs(args)
	if err := res.Schema.Validate(args); err != nil {
		return nil, &errdefs.Error{Code: errdefs.InvalidArguments, Err: err}
	}
	out := &Rendering{Tool: name, Version: res.Tool.Version, Kind: def.Kind}
	tpl, ok := res.Compiled.(kind.Templated)
	if !ok {
		return nil, errdefs.Errorf(errdefs.InvalidRequest, "%s tools have no template to render", def.Kind)
	}
	// Rendered with the real values, so every check a call meets applies;
	// what is shown has each value redacted.
	tool := def.KindTool()
	s, err := d.callSecrets(ctx, res, tool, "")
	if err != nil {
		return nil, err
	}
	env := d.env
	env.Preview = true
	req := &kind.Request{Permissions: def.Permissions}
	if _, err := tpl.Build(ctx, &kind.Call{Env: &env, Tool: tool, Args: args, AllowDash: res.Schema.AllowDash, Defaults: res.Schema.Defaults, Secret: s.lookup}, req); err != nil {
		return nil, redactError(s.scrub, err)
	}
	if sh := req.Shell; sh != nil {
		mode := template.ShellModeShell
		if sh.Argv != nil {
			mode = template.ShellModeArgv
		}
		out.Shell = &template.ShellRendering{Mode: mode, Argv: sh.Argv, Command: sh.Command}
		if len(sh.Env) > 0 {
			out.Shell.Env = sh.Env
		}
	}
	if h := req.HTTP; h != nil {
		out.HTTP = &template.HTTPRendering{Method: h.Method, URL: h.URL, Headers: h.Headers, Body: h.Body}
	}
	if s.scrub != nil {
		redactRendering(s.scrub, out)
	}
	return out, nil
}

// redactError scrubs err with s, the scrubber of a rendering that used
// secrets; with none (s nil) err is returned as it was.
func redactError(s *scrub.Scrubber, err error) error {
	if s == nil {
		return err
	}
	return scrubError(s, err)
}

// redactRendering scrubs a rendering that used secrets, so what is shown
// has each secret value redacted.
func redactRendering(s *scrub.Scrubber, r *Rendering) {
	if sh := r.Shell; sh != nil {
		for i, a := range sh.Argv {
			sh.Argv[i] = s.Scrub(a)
		}
		sh.Command = s.Scrub(sh.Command)
		for k, v := range sh.Env {
			sh.Env[k] = s.Scrub(v)
		}
	}
	if h := r.HTTP; h != nil {
		h.URL = s.Scrub(h.URL)
		for k, v := range h.Headers {
			h.Headers[k] = s.Scrub(v)
		}
		if len(h.Body) > 0 {
			h.Body = s.ScrubBytes(h.Body)
		}
	}
}
