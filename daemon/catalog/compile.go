package catalog

import (
	"errors"

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
	return nil
}
