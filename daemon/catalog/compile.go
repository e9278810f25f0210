package catalog

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/policy/jscheck"
	"github.com/toolcage/toolcage/policy/netguard"
	"github.com/toolcage/toolcage/policy/template"
	"github.com/toolcage/toolcage/toolspec"
)

// Resolved is a tool ready to be called: its definition with the schema
// and templates compiled once, not on every call.
type Resolved struct {
	Tool   *Tool
	Schema *Schema
	// Shell is the compiled command of a shell tool; Env its env templates.
	Shell *template.CompiledShell
	Env   map[string]*template.Template
	// HTTP is the compiled request of an http tool.
	HTTP *template.CompiledHTTP
}

// HTTPTemplate returns the template part of an http tool's spec.
func HTTPTemplate(s *HTTPSpec) template.HTTPSpec {
	return template.HTTPSpec{Method: s.Method, URL: s.URL, Params: s.Params, Headers: s.Headers, Body: s.Body}
}

// Compile compiles everything a call of t needs. Check has already
// accepted the definition, so errors here mean a stored definition no
// longer passes today's rules.
func Compile(t *Tool) (*Resolved, error) {
	def := t.Def
	s, err := CompileSchema(def.Parameters)
	if err != nil {
		return nil, invalid(fieldError("parameters", err))
	}
	r := &Resolved{Tool: t, Schema: s}
	switch def.Kind {
	case toolspec.Shell:
		if r.Shell, err = template.CompileShell(def.Shell.Command); err != nil {
			return nil, invalid(fieldError("shell.command", err))
		}
		r.Env = make(map[string]*template.Template, len(def.Shell.Env))
		for k, v := range def.Shell.Env {
			if r.Env[k], err = template.Parse(v); err != nil {
				return nil, invalid(fieldError("shell.env."+k, err))
			}
		}
	case toolspec.HTTP:
		if r.HTTP, err = template.CompileHTTP(HTTPTemplate(def.HTTP)); err != nil {
			return nil, invalid(fieldError("http", err))
		}
	}
	return r, nil
}

func fieldError(field string, err error) error {
	return &ValidationError{Problems: []Problem{{Field: field, Message: err.Error()}}}
}

// checkKind runs the kind-specific checks a definition must pass before it
// is stored or run.
func checkKind(def *Definition) error {
	switch def.Kind {
	case toolspec.JS:
		if err := jscheck.Check(def.JS.Code); err != nil {
			return &errdefs.Error{Code: errdefs.PolicyDenied, Err: err}
		}
		if len(def.JS.AllowedDomains) > 0 {
			if _, err := netguard.New(netguard.Config{AllowedDomains: def.JS.AllowedDomains}); err != nil {
				return invalid(fieldError("js.allowed_domains", err))
			}
		}
	case toolspec.Shell:
		if err := template.ValidateShell(def.Shell.Command); err != nil {
			return invalid(fieldError("shell.command", err))
		}
		if d := def.Shell.Dir; d != "" && !filepath.IsAbs(d) {
			return invalid(fieldError("shell.dir", errors.New("must be an absolute path")))
		}
		for k, v := range def.Shell.Env {
			if _, err := template.Parse(v); err != nil {
				return invalid(fieldError("shell.env."+k, err))
			}
		}
	case toolspec.HTTP:
		c, err := template.CompileHTTP(HTTPTemplate(def.HTTP))
		if err != nil {
			return invalid(fieldError("http", err))
		}
		guard, err := netguard.New(netguard.Config{AllowedDomains: def.HTTP.AllowedDomains})
		if err != nil {
			return invalid(fieldError("http.allowed_domains", err))
		}
		// The host is fixed by the author: render with stand-in values and
		// check it against the tool's own allowlist now, not at first call.
		sample := map[string]any{}
		for _, v := range c.Vars() {
			sample[v] = "x"
		}
		r, err := c.Render(sample, func(string) (string, error) { return "x", nil })
		if err != nil {
			return invalid(fieldError("http.url", err))
		}
		if _, err := guard.CheckURL(r.URL); err != nil {
			return invalid(fieldError("http.url", fmt.Errorf("%w (is the host in allowed_domains?)", err)))
		}
	}
	return nil
}
