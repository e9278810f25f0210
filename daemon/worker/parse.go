package worker

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/internal/filetrust"
	"github.com/toolcage/toolcage/policy"
)

// maxDepth bounds nesting, so a hostile file cannot exhaust the stack.
const maxDepth = 64

// maxProblems bounds the problems one Parse reports; a file that is wrong
// everywhere needs fixing from the top anyway.
const maxProblems = 50

var (
	workerNameRE = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)
	// toolNameRE is the catalog's form of tool and secret names.
	toolNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
)

// Parse reads the worker file at path whose content is data. Decoding is
// strict: an unknown key, a key given twice, a value of the wrong type or
// form, anchors and aliases are errors. tool_files patterns are matched
// relative to path's directory, and each file they match is read and
// parsed as a tool definition. The error is a *ParseError listing every
// problem with file:line:col; YAML syntax errors, which the YAML library
// places by line only, get column 1.
func Parse(path string, data []byte) (*Worker, error) {
	return parse(path, data, Toolsets())
}

// Load reads the worker file at path (at most MaxFileBytes) and parses it.
// A file that cannot be read gives its *os.PathError; a file that does
// not parse, a *ParseError; a file anyone but this process's user and
// root can change (CheckTrust), a forbidden error naming it.
func Load(path string) (*Worker, error) {
	data, err := readLimited(path, MaxFileBytes)
	if err != nil {
		return nil, err
	}
	w, err := Parse(path, data)
	if err != nil {
		return nil, err
	}
	if err := w.CheckTrust(filetrust.ForProcess()); err != nil {
		return nil, err
	}
	return w, nil
}

// parse is Parse with the toolset registry as a parameter, for tests.
func parse(path string, data []byte, toolsets []Toolset) (*Worker, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &ParseError{Problems: []*Error{{File: path, Line: 1, Column: 1, Message: err.Error()}}}
	}
	p := &parser{file: abs, toolsets: toolsets}
	w := p.parse(data)
	if len(p.errs) > 0 {
		slices.SortStableFunc(p.errs, func(a, b *Error) int {
			if a.File != b.File { // the worker file's own problems first
				return boolCmp(a.File != abs, b.File != abs)
			}
			if a.Line != b.Line {
				return a.Line - b.Line
			}
			return a.Column - b.Column
		})
		return nil, &ParseError{Problems: p.errs}
	}
	return w, nil
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// parser collects the problems of one worker file.
type parser struct {
	file     string
	toolsets []Toolset
	errs     []*Error
}

// errorAt records a problem at n in the worker file.
func (p *parser) errorAt(n *yaml.Node, format string, args ...any) {
	p.errorIn(p.file, n, format, args...)
}

// errorIn records a problem at n in file.
func (p *parser) errorIn(file string, n *yaml.Node, format string, args ...any) {
	line, col := 1, 1
	if n != nil && n.Line > 0 {
		line, col = n.Line, max(n.Column, 1)
	}
	p.add(&Error{File: file, Line: line, Column: col, Message: fmt.Sprintf(format, args...)})
}

func (p *parser) add(e *Error) {
	if len(p.errs) < maxProblems {
		p.errs = append(p.errs, e)
	}
}

// parse decodes the file; the result is only meaningful without errors.
func (p *parser) parse(data []byte) *Worker {
	if len(data) > MaxFileBytes {
		p.errorAt(nil, "file is larger than %d bytes", MaxFileBytes)
		return nil
	}
	root, err := readDocument(data, "worker")
	if err != nil {
		p.add(yamlError(p.file, err))
		return nil
	}
	if !p.plain(root, 0) {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		p.errorAt(root, "want a mapping of worker settings (name, tools, ...), got %s", kindName(root))
		return nil
	}
	w := &Worker{Path: p.file}
	var nameNode, approvalTools, workspaceNode, readonlyNode, protectNode *yaml.Node
	p.mapping(root, "", map[string]func(*yaml.Node){
		"name": func(n *yaml.Node) {
			nameNode = n
			w.Name = p.str(n, "name")
			switch {
			case w.Name == "" && n.ShortTag() == "!!str":
				p.errorAt(n, "name: is empty")
			case len(w.Name) > MaxNameLen:
				p.errorAt(n, "name: is longer than %d characters", MaxNameLen)
			case w.Name != "" && !workerNameRE.MatchString(w.Name):
				p.errorAt(n, "name: %q must match %s", w.Name, workerNameRE)
			}
		},
		"description": func(n *yaml.Node) { w.Description = p.str(n, "description") },
		"profile": func(n *yaml.Node) {
			if w.Profile = p.str(n, "profile"); w.Profile == "" && n.ShortTag() == "!!str" {
				p.errorAt(n, "profile: is empty; leave it out for no profile")
			}
		},
		"tools":      func(n *yaml.Node) { w.Tools = p.names(n, "tools", toolNameRE) },
		"tool_files": func(n *yaml.Node) { w.ToolFiles = p.toolFiles(n, w) },
		"secrets":    func(n *yaml.Node) { w.Secrets = p.names(n, "secrets", toolNameRE) },
		"approval": func(n *yaml.Node) {
			p.mapping(n, "approval", map[string]func(*yaml.Node){
				"default": func(n *yaml.Node) { w.Approval.Default = p.approval(n, "approval.default") },
				"tools": func(n *yaml.Node) {
					approvalTools = n
					w.Approval.Tools = p.approvalTools(n)
				},
			})
		},
		"limits":     func(n *yaml.Node) { w.Limits = p.limits(n) },
		"rate_limit": func(n *yaml.Node) { w.RateLimit = p.rateLimit(n) },
		"agent_tools": func(n *yaml.Node) {
			p.mapping(n, "agent_tools", map[string]func(*yaml.Node){
				"create":     func(n *yaml.Node) { w.AgentTools.Create = p.boolean(n, "agent_tools.create") },
				"meta_tools": func(n *yaml.Node) { w.AgentTools.MetaTools = p.boolean(n, "agent_tools.meta_tools") },
			})
		},
		"toolsets": func(n *yaml.Node) { w.Toolsets = p.toolsetSettings(n) },
		"workspace": func(n *yaml.Node) {
			workspaceNode = n
			w.Workspace = p.workspace(n)
		},
		"readonly": func(n *yaml.Node) {
			readonlyNode = n
			w.ReadOnly = p.boolean(n, "readonly")
		},
		"protect": func(n *yaml.Node) {
			protectNode = n
			switch w.Protect = p.str(n, "protect"); w.Protect {
			case policy.ProtectAsk, policy.ProtectBlocked, policy.ProtectOff:
			default:
				if n.ShortTag() == "!!str" {
					p.errorAt(n, "protect: unknown value %q (want ask, blocked or off)", w.Protect)
				}
				w.Protect = ""
			}
		},
		"mounts": func(n *yaml.Node) { w.Mounts = p.mountGrants(n) },
	})
	if protectNode != nil && workspaceNode == nil {
		p.errorAt(protectNode, "protect: says what becomes of commands that destroy work in the workspace, but there is no workspace:")
	}
	if readonlyNode == nil && workspaceNode != nil {
		w.ReadOnly = true // a workspace is read-only unless the file says otherwise
	} else if readonlyNode != nil && workspaceNode == nil {
		p.errorAt(readonlyNode, "readonly: says how tools may use the workspace, but there is no workspace:")
	}
	p.checkWorkspace(w, workspaceNode)
	if nameNode == nil {
		p.errorAt(root, "name: is required")
	}
	if len(p.errs) == 0 {
		p.toolsetTools(w, root)
	}
	p.crossCheck(w, root, approvalTools)
	return w
}

// crossCheck applies the rules that span fields: a tool is named once, and
// approval.tools names the worker's tools.
func (p *parser) crossCheck(w *Worker, root, approvalTools *yaml.Node) {
	for _, lt := range w.LocalTools {
		if slices.Contains(w.Tools, lt.Def.Name) {
			p.errorAt(valueOf(root, "tool_files"), "tool_files: %s defines tool %q, which tools also names from the catalog; a worker's tool names must be unique", lt.File, lt.Def.Name)
		}
	}
	if approvalTools == nil || w.AgentTools.Create {
		// With agent_tools.create, entries may name tools the agent is
		// yet to make.
		return
	}
	for i := 0; i+1 < len(approvalTools.Content); i += 2 {
		k := approvalTools.Content[i]
		if w.AgentTools.MetaTools && slices.Contains(catalog.MetaToolNames, k.Value) {
			continue // a meta-tool the worker offers
		}
		if _, valid := w.Approval.Tools[k.Value]; valid && !w.HasTool(k.Value) {
			p.errorAt(k, "approval.tools: %q is not one of this worker's tools (tools, tool_files), and agent_tools.create is off", k.Value)
		}
	}
}

// readDocument decodes the one YAML document in data, a file holding one
// what ("worker", "tool").
func readDocument(data []byte, what string) (*yaml.Node, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("file is empty")
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, errors.New("file is empty")
		}
		return nil, err
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == io.EOF:
	case err != nil:
		return nil, err
	case extra.Kind != 0 && len(extra.Content) > 0 && !isNull(extra.Content[0]):
		return nil, &positioned{line: extra.Line, col: extra.Column, msg: "more than one YAML document; put one " + what + " in each file"}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return nil, errors.New("file is empty")
	}
	return doc.Content[0], nil
}

// positioned is an error that knows where it is.
type positioned struct {
	line, col int
	msg       string
}

func (e *positioned) Error() string { return e.msg }

// yamlLineRE finds the line the YAML library names in its errors.
var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): `)

// yamlError places an error from the YAML library (or readDocument) in
// file: the library gives a line, never a column.
func yamlError(file string, err error) *Error {
	e := &Error{File: file, Line: 1, Column: 1}
	var pe *positioned
	var te *yaml.TypeError
	switch {
	case errors.As(err, &pe):
		e.Line, e.Column, e.Message = max(pe.line, 1), max(pe.col, 1), pe.msg
		return e
	case errors.As(err, &te) && len(te.Errors) > 0:
		err = errors.New(te.Errors[0])
	}
	msg := err.Error()
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
			e.Line = n
		}
		msg = msg[len(m[0]):]
	}
	e.Message = "YAML: " + strings.TrimPrefix(msg, "yaml: ")
	return e
}

// plain refuses what strict decoding leaves out: anchors, aliases, merge
// keys, non-string keys and nesting past maxDepth. It reports whether n is
// free of them.
func (p *parser) plain(n *yaml.Node, depth int) bool {
	if depth > maxDepth {
		p.errorAt(n, "nested deeper than %d levels", maxDepth)
		return false
	}
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		p.errorAt(n, "anchors and aliases are not supported; write the value out")
		return false
	}
	ok := true
	for i, c := range n.Content {
		if n.Kind == yaml.MappingNode && i%2 == 0 {
			switch {
			case c.ShortTag() == "!!merge":
				p.errorAt(c, "merge keys (<<) are not supported")
				ok = false
				continue
			case c.Kind != yaml.ScalarNode || (c.ShortTag() != "!!str" && c.ShortTag() != "!!int"):
				p.errorAt(c, "mapping keys must be strings")
				ok = false
				continue
			}
		}
		ok = p.plain(c, depth+1) && ok
	}
	return ok
}

// mapping decodes the mapping n, calling fields[key] with each value. An
// unknown key or one given twice is an error naming the known keys. A null
// value (the key with nothing after it) counts as not written.
func (p *parser) mapping(n *yaml.Node, field string, fields map[string]func(*yaml.Node)) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		p.errorAt(n, "%s: want a mapping, got %s", field, kindName(n))
		return
	}
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := join(field, k.Value)
		fn, known := fields[k.Value]
		switch {
		case seen[k.Value]:
			p.errorAt(k, "%s: given twice", name)
			continue
		case !known:
			p.errorAt(k, "%s: unknown field (known: %s)", name, knownKeys(fields))
			continue
		}
		seen[k.Value] = true
		if isNull(v) {
			continue
		}
		fn(v)
	}
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

func knownKeys[V any](m map[string]V) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// kindName describes n for a person: "a list", "a number", ...
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!str":
			return fmt.Sprintf("the string %q", n.Value)
		case "!!int", "!!float":
			return "the number " + n.Value
		case "!!bool":
			return "the boolean " + n.Value
		case "!!null":
			return "nothing"
		}
		return fmt.Sprintf("%s %q", n.ShortTag(), n.Value)
	}
	return "an unsupported YAML node"
}

// str decodes a string scalar.
func (p *parser) str(n *yaml.Node, field string) string {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		p.errorAt(n, "%s: want a string, got %s", field, kindName(n))
		return ""
	}
	return n.Value
}

// boolean decodes true or false.
func (p *parser) boolean(n *yaml.Node, field string) bool {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!bool" {
		var b bool
		if err := n.Decode(&b); err == nil {
			return b
		}
	}
	p.errorAt(n, "%s: want true or false, got %s", field, kindName(n))
	return false
}

// count decodes a whole number from 0 to limit; ok is false after an error.
func (p *parser) count(n *yaml.Node, field string, limit int) (v int, ok bool) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" {
		var v int64
		if err := n.Decode(&v); err == nil && v >= 0 && v <= int64(limit) {
			return int(v), true
		}
		p.errorAt(n, "%s: %s is out of range (0 to %d)", field, n.Value, limit)
		return 0, false
	}
	p.errorAt(n, "%s: want a whole number, got %s", field, kindName(n))
	return 0, false
}

// names decodes a list of distinct names of the form re.
func (p *parser) names(n *yaml.Node, field string, re *regexp.Regexp) []string {
	if n.Kind != yaml.SequenceNode {
		p.errorAt(n, "%s: want a list of names, got %s", field, kindName(n))
		return nil
	}
	var out []string
	for _, c := range n.Content {
		s := p.str(c, field)
		switch {
		case c.ShortTag() != "!!str":
		case !re.MatchString(s) || len(s) > catalog.MaxNameLen:
			p.errorAt(c, "%s: %q is not a valid name (%s, at most %d characters)", field, s, re, catalog.MaxNameLen)
		case slices.Contains(out, s):
			p.errorAt(c, "%s: %q is listed twice", field, s)
		default:
			out = append(out, s)
		}
	}
	return out
}

// approval decodes preApproved, ask or blocked.
func (p *parser) approval(n *yaml.Node, field string) string {
	s := p.str(n, field)
	switch s {
	case catalog.ApprovalPreApproved, catalog.ApprovalAsk, catalog.ApprovalBlocked:
		return s
	}
	if n.ShortTag() == "!!str" {
		p.errorAt(n, "%s: unknown approval %q (want preApproved, ask or blocked)", field, s)
	}
	return ""
}

// approvalTools decodes approval.tools: tool name → approval.
func (p *parser) approvalTools(n *yaml.Node) map[string]string {
	if n.Kind != yaml.MappingNode {
		p.errorAt(n, "approval.tools: want a mapping of tool name to approval, got %s", kindName(n))
		return nil
	}
	out := make(map[string]string, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		field := "approval.tools." + k.Value
		if _, dup := out[k.Value]; dup {
			p.errorAt(k, "%s: given twice", field)
			continue
		}
		if !toolNameRE.MatchString(k.Value) {
			p.errorAt(k, "approval.tools: %q is not a valid tool name (%s)", k.Value, toolNameRE)
			continue
		}
		out[k.Value] = p.approval(v, field)
	}
	return out
}

// limits decodes limits with the tool format's duration and size forms.
func (p *parser) limits(n *yaml.Node) Limits {
	var l Limits
	p.mapping(n, "limits", map[string]func(*yaml.Node){
		"timeout": func(n *yaml.Node) {
			var d catalog.Duration
			if p.viaJSON(n, "limits.timeout", &d) {
				switch {
				case d <= 0:
					p.errorAt(n, "limits.timeout: must be positive")
				case time.Duration(d) > 24*time.Hour:
					p.errorAt(n, "limits.timeout: is longer than 24h")
				}
				l.Timeout = d
			}
		},
		"memory":   func(n *yaml.Node) { l.Memory = p.size(n, "limits.memory") },
		"output":   func(n *yaml.Node) { l.Output = p.size(n, "limits.output") },
		"requests": func(n *yaml.Node) { l.Requests, _ = p.count(n, "limits.requests", 1<<20) },
	})
	return l
}

func (p *parser) size(n *yaml.Node, field string) catalog.ByteSize {
	var b catalog.ByteSize
	if p.viaJSON(n, field, &b) && b <= 0 {
		p.errorAt(n, "%s: must be positive", field)
	}
	return b
}

// viaJSON decodes the scalar n with v's UnmarshalJSON, the tool format's
// own reading of durations and sizes.
func (p *parser) viaJSON(n *yaml.Node, field string, v json.Unmarshaler) bool {
	var raw []byte
	switch {
	case n.Kind != yaml.ScalarNode:
	case n.ShortTag() == "!!str":
		raw, _ = json.Marshal(n.Value)
	case n.ShortTag() == "!!int" || n.ShortTag() == "!!float":
		var f float64
		if n.Decode(&f) == nil {
			raw, _ = json.Marshal(f)
		}
	}
	if raw == nil {
		p.errorAt(n, "%s: want a value such as \"30s\" or \"128MiB\", got %s", field, kindName(n))
		return false
	}
	if err := v.UnmarshalJSON(raw); err != nil {
		p.errorAt(n, "%s: %v", field, err)
		return false
	}
	return true
}

// maxPerMinute bounds rate_limit.per_minute (1000 calls a second).
const maxPerMinute = 60_000

func (p *parser) rateLimit(n *yaml.Node) *RateLimit {
	r := &RateLimit{}
	var perMinute *yaml.Node
	p.mapping(n, "rate_limit", map[string]func(*yaml.Node){
		"per_minute": func(n *yaml.Node) {
			perMinute = n
			var ok bool
			if r.PerMinute, ok = p.count(n, "rate_limit.per_minute", maxPerMinute); ok && r.PerMinute == 0 {
				p.errorAt(n, "rate_limit.per_minute: must be at least 1; leave rate_limit out for no limit")
			}
		},
		"burst": func(n *yaml.Node) { r.Burst, _ = p.count(n, "rate_limit.burst", maxPerMinute) },
	})
	if perMinute == nil && n.Kind == yaml.MappingNode {
		p.errorAt(n, "rate_limit.per_minute: is required")
	}
	return r
}

// valueOf returns the value of key in the mapping n, or n itself.
func valueOf(n *yaml.Node, key string) *yaml.Node {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i+1]
			}
		}
	}
	return n
}
