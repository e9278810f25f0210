// Package filesystem is the filesystem toolset: read_file, write_file,
// edit_file, list_files, glob, search, delete_file and file_info on the
// worker's workspace. Each is an fs tool (daemon/kind/fs) holding the
// filesystem permission, so the workspace is bound at /workspace in its
// sandbox (read-only unless the worker says readonly: false) and the fs
// executor opens every path beneath it (executors/fs). The writing tools
// ask a person by default (approval: ask); the worker's approval rules
// can say otherwise.
package filesystem

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/daemon/toolset"
	"github.com/toolcage/toolcage/toolspec"
)

// Defaults of the settings.
const (
	DefaultMaxReadBytes  = 1 << 20
	DefaultMaxWriteBytes = 1 << 20
	DefaultMaxMatches    = 200
	// Ceilings a worker file may not pass.
	maxReadCeiling    = 64 << 20
	maxWriteCeiling   = 64 << 20
	maxMatchesCeiling = 10_000
)

// Settings are what a worker file may write under toolsets.filesystem.
type Settings struct {
	// MaxReadBytes caps what one read_file returns (and the files search
	// reads); MaxWriteBytes what write_file and edit_file leave in a file.
	MaxReadBytes  kind.ByteSize `json:"max_read_bytes,omitempty"`
	MaxWriteBytes kind.ByteSize `json:"max_write_bytes,omitempty"`
	// MaxMatches caps the matches of search and the entries of glob and
	// list_files.
	MaxMatches int `json:"max_matches,omitempty"`
}

func decode(raw json.RawMessage) (Settings, error) {
	var s Settings
	if err := kind.DecodeStrict(raw, &s); err != nil {
		return s, err
	}
	switch {
	case s.MaxReadBytes < 0 || s.MaxReadBytes > maxReadCeiling:
		return s, fmt.Errorf("max_read_bytes: want 1 byte to %d MiB", maxReadCeiling>>20)
	case s.MaxWriteBytes < 0 || s.MaxWriteBytes > maxWriteCeiling:
		return s, fmt.Errorf("max_write_bytes: want 1 byte to %d MiB", maxWriteCeiling>>20)
	case s.MaxMatches < 0 || s.MaxMatches > maxMatchesCeiling:
		return s, fmt.Errorf("max_matches: want 1 to %d", maxMatchesCeiling)
	}
	if s.MaxReadBytes == 0 {
		s.MaxReadBytes = DefaultMaxReadBytes
	}
	if s.MaxWriteBytes == 0 {
		s.MaxWriteBytes = DefaultMaxWriteBytes
	}
	if s.MaxMatches == 0 {
		s.MaxMatches = DefaultMaxMatches
	}
	return s, nil
}

// Toolset is the filesystem toolset.
var Toolset = toolset.New("filesystem", "read, write, edit, list, glob, search, delete and describe files of the worker's workspace", decode, tools)

// param is one property of a tool's parameters.
type param struct {
	name, typ, desc string
	required        bool
}

var (
	pathParam = param{"path", "string", "path relative to the workspace (or under /workspace)", true}
	optPath   = param{"path", "string", "directory relative to the workspace; the workspace itself when left out", false}
)

// tool is one tool of the toolset, before its settings.
type tool struct {
	op, desc string
	params   []param
	writes   bool
}

var toolList = []tool{
	{toolspec.FSReadFile, "Read a text file of the workspace, optionally only lines start_line to end_line (from 1). Returns content, the last line returned, truncated and eof.",
		[]param{pathParam, {"start_line", "integer", "first line to return, from 1", false}, {"end_line", "integer", "last line to return", false}}, false},
	{toolspec.FSWriteFile, "Write a file of the workspace whole (created with its directories, or replaced).",
		[]param{pathParam, {"content", "string", "the file's new content", true}}, true},
	{toolspec.FSEditFile, "Replace one exact piece of text in a file of the workspace. Refused unless find occurs exactly once: give enough surrounding text.",
		[]param{pathParam, {"find", "string", "the exact text to replace; it must occur exactly once", true}, {"replace", "string", "the text to put in its place", true}}, true},
	{toolspec.FSListFiles, "List the entries of a directory of the workspace.",
		[]param{optPath}, false},
	{toolspec.FSGlob, "Find files of the workspace by a pattern such as **/*.go (** matches any number of directories).",
		[]param{{"pattern", "string", "glob pattern relative to the workspace", true}}, false},
	{toolspec.FSSearch, "Search the text files of the workspace (or of one directory or file of it) for lines matching a regular expression (RE2 syntax).",
		[]param{{"pattern", "string", "regular expression", true}, {"path", "string", "directory or file to search; the whole workspace when left out", false}}, false},
	{toolspec.FSDeleteFile, "Delete a file of the workspace (not a directory).",
		[]param{pathParam}, true},
	{toolspec.FSFileInfo, "Describe a file of the workspace: type, size, mode, modification time (a symlink is described, not followed).",
		[]param{pathParam}, false},
}

// Names lists the toolset's tools.
func Names() []string {
	out := make([]string, len(toolList))
	for i, t := range toolList {
		out[i] = t.op
	}
	return out
}

func tools(w toolset.Worker, s Settings) ([]*catalog.Definition, error) {
	if w.Workspace == "" {
		return nil, errors.New("the filesystem toolset works on the worker's workspace; add workspace: to the worker file")
	}
	out := make([]*catalog.Definition, 0, len(toolList))
	for _, t := range toolList {
		props := map[string]any{}
		required := []string{}
		for _, p := range t.params {
			prop := map[string]any{"type": p.typ, "description": p.desc}
			if p.typ == "integer" {
				prop["minimum"] = 1
			}
			props[p.name] = prop
			if p.required {
				required = append(required, p.name)
			}
		}
		def := map[string]any{
			"name": t.op, "description": t.desc, "kind": toolspec.FS, "category": "Filesystem",
			"permissions": []string{"filesystem"},
			"parameters":  map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false},
			"fs": map[string]any{"op": t.op, "readonly": w.ReadOnly, "max_read_bytes": int64(s.MaxReadBytes),
				"max_write_bytes": int64(s.MaxWriteBytes), "max_matches": s.MaxMatches},
		}
		if t.writes {
			def["approval"] = catalog.ApprovalAsk
		}
		d, err := toolset.Define(def)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}
