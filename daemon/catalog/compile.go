package catalog

import (
	"errors"
	"fmt"

	"github.com/toolcage/toolcage/daemon/kind"
)

// Resolved is a tool ready to be called: its definition with the schema
// and the kind's templates compiled once, not on every call.
type Resolved struct {
	Tool   *Tool
	Schema *Schema
	// Compiled is the kind's block, compiled.
	Compiled kind.Compiled
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
	if def.Spec == nil {
		return nil, invalid(fieldError(string(def.Kind), errors.New("is required")))
	}
	c, err := def.Spec.Compile(def.KindTool())
	if err != nil {
		return nil, kindError(err)
	}
	return &Resolved{Tool: t, Schema: s, Compiled: c}, nil
}

func fieldError(field string, err error) error {
	return &ValidationError{Problems: []Problem{{Field: field, Message: err.Error()}}}
}

// kindError makes a kind's field error an invalid definition; coded
// errors (a policy refusal) keep their code.
func kindError(err error) error {
	var fe *kind.FieldError
	if errors.As(err, &fe) {
		return invalid(fieldError(fe.Field, fe.Err))
	}
	return err
}

// checkKind runs the kind-specific checks a definition must pass before it
// is stored or run.
func checkKind(def *Definition) error {
	if def.Spec == nil {
		return nil
	}
	if err := def.Spec.Check(def.KindTool()); err != nil {
		return kindError(err)
	}
	return checkNeededArgs(def)
}

// checkNeededArgs refuses a template placeholder a call may leave out
// (not required) when the schema gives it no default: the call would
// fail, or render a command the author never wrote.
func checkNeededArgs(def *Definition) error {
	n, ok := def.Spec.(kind.ArgNeeder)
	if !ok {
		return nil
	}
	s, err := CompileSchema(def.Parameters)
	if err != nil {
		return invalid(fieldError("parameters", err))
	}
	var ps []Problem
	seen := map[string]bool{}
	for _, a := range n.NeededArgs() {
		if s.Required[a.Name] || s.Defaults[a.Name] != nil || seen[a.Name] {
			continue
		}
		seen[a.Name] = true
		ps = append(ps, Problem{Field: "parameters.properties." + a.Name, Message: fmt.Sprintf(
			"{{.%s}} in %s is optional (not in required) and has no default: add a \"default\" to the property, or list %q in required",
			a.Name, a.Field, a.Name)})
	}
	if len(ps) > 0 {
		return invalid(&ValidationError{Problems: ps})
	}
	return nil
}
