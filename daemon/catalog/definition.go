// Package catalog holds the tool definition format and the tool catalog: the
// lifecycle rules (who may create, change, approve or delete which tool) on
// top of the store.
package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/daemon/kind/builtin"
	"github.com/toolcage/toolcage/daemon/kind/meta"
	"github.com/toolcage/toolcage/policy"
	"github.com/toolcage/toolcage/policy/mounts"
	"github.com/toolcage/toolcage/toolspec"
)

// Approval modes: policy.Approval decides what each means for a call.
const (
	ApprovalPreApproved = policy.ApprovalPreApproved
	ApprovalAsk         = policy.ApprovalAsk
	ApprovalBlocked     = policy.ApprovalBlocked
)

// Isolation modes.
const (
	IsolationProcess = "process"
	IsolationDocker  = "docker"
)

// Permissions a tool may ask for.
var knownPermissions = map[string]bool{
	"network": true, "filesystem": true, "database": true, "shell": true,
	"email": true, "scheduling": true, "secrets": true,
}

// dangerousPermissions reach past the sandbox's walls. They no longer decide
// pending_approval alone: any permission of an agent's tool does
// (policy.StartsPending).
var dangerousPermissions = []string{"shell", "filesystem", "email"}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// MetaToolNames are the meta-tools a worker may offer its agent
// (daemon/kind/meta).
var MetaToolNames = meta.Names()

// ReservedNames are names no tool may take: "definitions" is the route
// GET /v1/tools/definitions, and the meta-tools must not be shadowed.
var ReservedNames = append([]string{"definitions"}, MetaToolNames...)

// MaxNameLen bounds tool names; longer names are refused.
const MaxNameLen = 64

// MaxDefinitionBytes bounds a definition file.
const MaxDefinitionBytes = 1 << 20

// Definition is a tool as its author writes it (YAML or JSON).
type Definition struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Kind        toolspec.Kind   `json:"kind"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Category    string          `json:"category,omitempty"`
	Permissions []string        `json:"permissions,omitempty"`
	Secrets     []string        `json:"secrets,omitempty"`
	// RequiredAPIKeys is the OwnPilot seed's name for secrets, accepted as
	// an alias: its names join Secrets when the definition is read.
	RequiredAPIKeys []RequiredAPIKey `json:"required_api_keys,omitempty"`
	Approval        string           `json:"approval,omitempty"`
	Isolation       string           `json:"isolation,omitempty"`
	Limits          *Limits          `json:"limits,omitempty"`
	// Mounts are host paths the tool sees at the same path in its sandbox
	// (it must hold the filesystem permission): a person's approval of the
	// tool covers them; an agent's tool may name only what its worker
	// grants. The daemon's own paths are refused when the tool is stored
	// and again at each call.
	Mounts []Mount `json:"mounts,omitempty"`

	// Spec is the kind's block, written under the kind's name (js:,
	// shell:, http:) and decoded by the kind (daemon/kind).
	Spec kind.Spec `json:"-"`

	// strayBlocks are blocks of other kinds the definition gave.
	strayBlocks []string
	// toolset says a built-in toolset wrote the definition
	// (ParseToolsetJSON): only then may it name a toolset-only kind.
	toolset bool
	// approvalDefaulted says Approval was not written but filled in (by
	// ApplyDefaults, or from the creator by the catalog): the store keeps
	// "" for it, so the default can follow the creator and the worker.
	approvalDefaulted bool
}

// RequiredAPIKey is one entry of required_api_keys: a name, or an object
// with a name (displayName and docsUrl are accepted and dropped).
type RequiredAPIKey struct {
	Name string `json:"name"`
}

// UnmarshalJSON accepts "name" or {"name": ..., "displayName": ..., "docsUrl": ...}.
func (k *RequiredAPIKey) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		k.Name = s
		return nil
	}
	var o struct {
		Name        string `json:"name"`
		DisplayName string `json:"displayName"`
		DocsURL     string `json:"docsUrl"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return fmt.Errorf("required_api_keys: want a name or {name, displayName, docsUrl}: %w", err)
	}
	k.Name = o.Name
	return nil
}

// MaxMounts bounds a tool's mounts.
const MaxMounts = 16

// Mount is one host path a tool sees; read-only unless readonly: false.
type Mount struct {
	Path     string `json:"path"`
	ReadOnly bool   `json:"readonly"`
}

// UnmarshalJSON reads {path, readonly}, readonly true when not written.
func (m *Mount) UnmarshalJSON(b []byte) error {
	type plain Mount
	v := plain{ReadOnly: true}
	if err := kind.DecodeStrict(b, &v); err != nil {
		return fmt.Errorf("mounts: want {path, readonly}: %w", err)
	}
	*m = Mount(v)
	return nil
}

// Limits as written in a definition: durations like "10s", sizes like "64MiB".
type Limits struct {
	Timeout  Duration `json:"timeout,omitempty"`
	Memory   ByteSize `json:"memory,omitempty"`
	Output   ByteSize `json:"output,omitempty"`
	Requests int      `json:"requests,omitempty"`
}

// Parse decodes a definition from YAML or JSON, strictly: unknown fields are
// errors, so a typo never silently drops a limit. Defaults are filled in and
// the result is validated.
func Parse(data []byte) (*Definition, error) {
	if len(data) > MaxDefinitionBytes {
		return nil, &ValidationError{Problems: []Problem{{Field: "", Message: fmt.Sprintf("definition is larger than %d bytes", MaxDefinitionBytes)}}}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &ValidationError{Problems: []Problem{{Message: "definition is empty"}}}
	}
	js, err := YAMLToJSON(data)
	if err != nil {
		return nil, &ValidationError{Problems: []Problem{{Message: "not valid YAML or JSON: " + err.Error()}}}
	}
	return ParseJSON(js)
}

// ParseJSON is Parse for input already known to be JSON.
func ParseJSON(data []byte) (*Definition, error) { return parseJSON(data, false) }

// ParseToolsetJSON is ParseJSON for a built-in toolset's definitions
// (daemon/toolset): the one way to a definition of a kind that exists
// only for a toolset (kind.ToolsetOnly), whose guarantees would not hold
// if a person or an agent wrote its block by hand.
func ParseToolsetJSON(data []byte) (*Definition, error) { return parseJSON(data, true) }

func parseJSON(data []byte, toolset bool) (*Definition, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var d Definition
	if err := dec.Decode(&d); err != nil {
		return nil, &ValidationError{Problems: []Problem{{Message: "bad definition: " + strings.TrimPrefix(err.Error(), "json: ")}}}
	}
	// More() misses a stray closing "]" or "}"; only EOF means nothing follows.
	if _, err := dec.Token(); err != io.EOF {
		return nil, &ValidationError{Problems: []Problem{{Message: "bad definition: trailing data after the object"}}}
	}
	d.toolset = toolset
	d.ApplyDefaults()
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return &d, nil
}

// ApplyDefaults fills in the fields a definition may omit.
func (d *Definition) ApplyDefaults() {
	if d.Approval == "" {
		d.Approval = ApprovalPreApproved
		d.approvalDefaulted = true
	}
	if len(bytes.TrimSpace(d.Parameters)) == 0 || string(bytes.TrimSpace(d.Parameters)) == "null" {
		d.Parameters = json.RawMessage(`{"type":"object","properties":{}}`)
		if p, ok := d.Spec.(kind.Parameterizer); ok {
			// An http tool's parameters follow from its {{vars}}.
			if params, err := p.Parameters(); err == nil {
				d.Parameters = params
			}
		}
	} else {
		// Compact, so formatting alone never counts as a change.
		var buf bytes.Buffer
		if json.Compact(&buf, d.Parameters) == nil {
			d.Parameters = buf.Bytes()
		}
	}
	if d.Permissions != nil {
		sort.Strings(d.Permissions)
	}
	for _, k := range d.RequiredAPIKeys {
		if k.Name != "" && !slices.Contains(d.Secrets, k.Name) {
			d.Secrets = append(d.Secrets, k.Name)
		}
	}
	d.RequiredAPIKeys = nil
	if d.Spec != nil {
		d.Spec.Normalize()
	}
}

// Problem is one thing wrong with a definition.
type Problem struct {
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	if p.Field == "" {
		return p.Message
	}
	return p.Field + ": " + p.Message
}

// ValidationError lists every problem found in a definition.
type ValidationError struct {
	Problems []Problem
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return "invalid tool definition: " + strings.Join(parts, "; ")
}

// Validate checks a definition, reporting every problem at once.
func (d *Definition) Validate() error {
	var ps []Problem
	add := func(field, format string, args ...any) {
		ps = append(ps, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	switch {
	case d.Name == "":
		add("name", "is required")
	case len(d.Name) > MaxNameLen:
		add("name", "is longer than %d characters", MaxNameLen)
	case !nameRE.MatchString(d.Name):
		add("name", "%q must match ^[a-z][a-z0-9_]*$", d.Name)
	case slices.Contains(ReservedNames, d.Name):
		add("name", "%q is reserved (a route of the socket API or an agent meta-tool)", d.Name)
	}
	if strings.TrimSpace(d.Description) == "" {
		add("description", "is required")
	}
	k, known := builtin.Kinds().Get(d.Kind)
	if to, only := k.(kind.ToolsetOnly); only && !d.toolset {
		add("kind", "kind %q exists only in the built-in %s toolset: turn it on in a worker file (%s) instead of writing its tools (want %s)",
			d.Kind, to.Toolset(), kind.TurnOn(to), builtin.Kinds())
		known = false
	} else if !known {
		if d.Kind == "" {
			add("kind", "is required (%s)", builtin.Kinds())
		} else {
			add("kind", "unknown kind %q (want %s)", d.Kind, builtin.Kinds())
		}
	}
	if _, err := CompileSchema(d.Parameters); err != nil {
		add("parameters", "%v", err)
	}
	for _, p := range d.Permissions {
		if !knownPermissions[p] {
			add("permissions", "unknown permission %q", p)
		}
	}
	for _, s := range d.Secrets {
		if !nameRE.MatchString(s) {
			add("secrets", "secret name %q must match ^[a-z][a-z0-9_]*$", s)
		}
	}
	switch d.Approval {
	case ApprovalPreApproved, ApprovalAsk, ApprovalBlocked:
	default:
		add("approval", "unknown approval %q (want preApproved, ask or blocked)", d.Approval)
	}
	switch d.Isolation {
	case "", IsolationProcess, IsolationDocker: // "": the daemon's isolation default
	default:
		add("isolation", "unknown isolation %q (want process or docker)", d.Isolation)
	}
	if l := d.Limits; l != nil {
		if l.Timeout < 0 || l.Memory < 0 || l.Output < 0 || l.Requests < 0 {
			add("limits", "must not be negative")
		}
		if l.Timeout > Duration(24*time.Hour) {
			add("limits.timeout", "is longer than 24h")
		}
	}
	if len(d.Mounts) > MaxMounts {
		add("mounts", "more than %d", MaxMounts)
	}
	if len(d.Mounts) > 0 && !d.HasPermission("filesystem") {
		add("mounts", "a tool with mounts must hold the filesystem permission")
	}
	for i, m := range d.Mounts {
		field := fmt.Sprintf("mounts[%d].path", i)
		if err := mounts.CheckTarget(m.Path); err != nil {
			add(field, "%v", err)
		}
		for _, prev := range d.Mounts[:i] {
			if prev.Path == m.Path {
				add(field, "%s is mounted twice", m.Path)
			}
		}
	}
	for _, b := range d.strayBlocks {
		add(b, "block given for a %s tool", d.Kind)
	}
	switch {
	case !known:
	case d.Spec == nil:
		p := k.Required()
		add(p.Field, "%s", p.Message)
	default:
		for _, p := range d.Spec.Validate(d.KindTool()) {
			add(p.Field, "%s", p.Message)
		}
	}
	if len(ps) == 0 {
		return nil
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Field < ps[j].Field })
	return &ValidationError{Problems: ps}
}

// WrittenApproval is the approval the definition writes, "" when it
// writes none (Approval then holds a default): what the store keeps and
// what worker.EffectiveApproval takes as the tool's word.
func (d *Definition) WrittenApproval() string {
	if d.approvalDefaulted {
		return ""
	}
	return d.Approval
}

// WrittenJSON is the definition as its author wrote it: like MarshalJSON,
// but with no approval where none was written. A patch merges onto this,
// so an unwritten approval stays unwritten.
func (d *Definition) WrittenJSON() ([]byte, error) {
	w := *d
	w.Approval = d.WrittenApproval()
	return json.Marshal(w)
}

// DefaultApproval is the approval of a tool that writes none, by who made
// it: a person's tool runs (preApproved); an agent's tool asks a person for
// each call (ask), unless its worker's settings say otherwise (see
// worker.EffectiveApproval). Unknown creators count as an agent.
func DefaultApproval(createdBy string) string {
	if createdBy == CreatedByUser {
		return ApprovalPreApproved
	}
	return ApprovalAsk
}

// defaultApprovalFor fills in the creator's default where the definition
// writes no approval.
func (d *Definition) defaultApprovalFor(createdBy string) {
	if d.Approval == "" || d.approvalDefaulted {
		d.Approval = DefaultApproval(createdBy)
		d.approvalDefaulted = true
	}
}

// HasDangerousPermission reports whether the tool asks for shell,
// filesystem or email.
func (d *Definition) HasDangerousPermission() bool {
	for _, p := range d.Permissions {
		for _, dp := range dangerousPermissions {
			if p == dp {
				return true
			}
		}
	}
	return false
}

// HasPermission reports whether the tool holds permission p.
func (d *Definition) HasPermission(p string) bool {
	for _, q := range d.Permissions {
		if q == p {
			return true
		}
	}
	return false
}

// KindTool is what the definition's kind block is told of the tool.
func (d *Definition) KindTool() kind.Tool {
	return kind.Tool{Name: d.Name, Permissions: d.Permissions, Secrets: d.Secrets}
}

// ExecutorLimits converts the written limits; zero fields mean "default".
func (d *Definition) ExecutorLimits() toolspec.Limits {
	if d.Limits == nil {
		return toolspec.Limits{}
	}
	return toolspec.Limits{
		Timeout:     time.Duration(d.Limits.Timeout),
		MemoryBytes: int64(d.Limits.Memory),
		OutputBytes: int64(d.Limits.Output),
		Requests:    d.Limits.Requests,
	}
}

// Duration is a time.Duration written as "10s" (or a number of seconds).
type Duration time.Duration

// MarshalJSON writes the duration as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads "10s", "1m30s" or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("bad duration %q: want e.g. \"10s\"", s)
		}
		*d = Duration(v)
		return nil
	}
	var n float64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("bad duration %s: want e.g. \"10s\"", b)
	}
	if n > float64((1<<63-1)/int64(time.Second)) || n < 0 {
		return fmt.Errorf("duration %s out of range", b)
	}
	*d = Duration(n * float64(time.Second))
	return nil
}

// ByteSize is a size written as "64MiB", "1MB", "100000" or a number.
type ByteSize = kind.ByteSize

// ParseByteSize parses "64MiB", "1 MB", "512k" or "1048576".
func ParseByteSize(s string) (int64, error) { return kind.ParseByteSize(s) }
