package worker

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/toolcage/toolcage/daemon/catalog"
)

// maxToolFiles bounds how many tool files one worker may name.
const maxToolFiles = 256

// toolFiles decodes tool_files: glob patterns relative to the worker
// file's directory, matching files in it or below. Every file they match is parsed as a tool definition
// and added to w.LocalTools; a pattern that matches nothing is an error,
// so a typo never silently drops tools.
func (p *parser) toolFiles(n *yaml.Node, w *Worker) []string {
	if n.Kind != yaml.SequenceNode {
		p.errorAt(n, "tool_files: want a list of file patterns, got %s", kindName(n))
		return nil
	}
	dir := filepath.Dir(p.file)
	var patterns []string
	seen := map[string]bool{}
	for _, c := range n.Content {
		pat := p.str(c, "tool_files")
		switch {
		case c.ShortTag() != "!!str":
			continue
		case strings.TrimSpace(pat) == "":
			p.errorAt(c, "tool_files: empty pattern")
			continue
		case filepath.IsAbs(pat):
			p.errorAt(c, "tool_files: %q is absolute; patterns are relative to the worker file's directory", pat)
			continue
		case escapes(pat):
			// Tools scoped to a worker live beside it; a pattern reaching
			// up could also glob its way through the whole file system.
			p.errorAt(c, "tool_files: %q leaves the worker file's directory; keep a worker's tool files beside it or below", pat)
			continue
		}
		patterns = append(patterns, pat)
		matches, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			p.errorAt(c, "tool_files: bad pattern %q: %v", pat, err)
			continue
		}
		if len(matches) == 0 {
			p.errorAt(c, "tool_files: %q matches no file in %s", pat, dir)
			continue
		}
		for _, m := range matches {
			// A pattern like ./*.yaml next to the worker matches the
			// worker file itself, which is no tool.
			if seen[m] || m == p.file {
				continue
			}
			seen[m] = true
			if len(seen) > maxToolFiles {
				p.errorAt(c, "tool_files: more than %d files", maxToolFiles)
				return patterns
			}
			lt := p.toolFile(c, m)
			if lt == nil {
				continue
			}
			if prev := w.LocalTool(lt.Def.Name); prev != nil {
				p.errorAt(c, "tool_files: tool %q is defined twice, in %s and %s", lt.Def.Name, prev.File, lt.File)
				continue
			}
			w.LocalTools = append(w.LocalTools, lt)
		}
	}
	return patterns
}

// escapes reports whether the relative pattern reaches above its
// directory. Glob never matches "." or ".." with a wildcard, so only
// literal ".." components can.
func escapes(pat string) bool {
	c := filepath.Clean(pat)
	return c == ".." || strings.HasPrefix(c, ".."+string(filepath.Separator))
}

// toolFile reads and parses one matched tool file; pattern is the
// worker's node that matched it, blamed when the file cannot be read.
func (p *parser) toolFile(pattern *yaml.Node, file string) *LocalTool {
	fi, err := os.Stat(file)
	switch {
	case err != nil:
		p.errorAt(pattern, "tool_files: %v", err)
		return nil
	case !fi.Mode().IsRegular():
		p.errorAt(pattern, "tool_files: %s is not a regular file", file)
		return nil
	}
	data, err := readLimited(file, catalog.MaxDefinitionBytes)
	if err != nil {
		p.errorAt(pattern, "tool_files: %v", err)
		return nil
	}
	lt, errs := ParseToolFile(file, data)
	for _, e := range errs {
		p.add(e)
	}
	return lt
}

// readLimited reads file, refusing one larger than limit bytes.
func readLimited(file string, limit int64) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &os.PathError{Op: "read", Path: file, Err: fmt.Errorf("larger than %d bytes", limit)}
	}
	return data, nil
}

// ParseToolFile parses a tool definition with catalog.Parse and places
// each of its problems in file by line and column: the catalog names the
// field, this finds the field's node. It also reports whether the file
// writes an approval of its own.
func ParseToolFile(file string, data []byte) (*LocalTool, []*Error) {
	root, err := readDocument(data, "tool")
	if err != nil {
		return nil, []*Error{yamlError(file, err)}
	}
	def, err := catalog.Parse(data)
	if err == nil {
		lt := &LocalTool{File: file, Def: def}
		if v := valueOf(root, "approval"); v != root && v.Kind == yaml.ScalarNode {
			lt.WrittenApproval = v.Value
		}
		return lt, nil
	}
	var ve *catalog.ValidationError
	if !errors.As(err, &ve) {
		return nil, []*Error{{File: file, Line: 1, Column: 1, Message: err.Error()}}
	}
	errs := make([]*Error, 0, len(ve.Problems))
	for _, pr := range ve.Problems {
		e := &Error{File: file, Line: 1, Column: 1, Message: "tool: " + pr.String()}
		if n := locate(root, pr); n != nil && n.Line > 0 {
			e.Line, e.Column = n.Line, max(n.Column, 1)
		} else if line := lineIn(pr.Message); line > 0 {
			e.Line = line
		}
		errs = append(errs, e)
	}
	return nil, errs
}

var (
	// unknownFieldRE and structFieldRE find the field encoding/json names.
	unknownFieldRE = regexp.MustCompile(`unknown field "([^"]+)"`)
	structFieldRE  = regexp.MustCompile(`Go struct field \w+\.([\w.]+) of type`)
	lineRE         = regexp.MustCompile(`\bline (\d+)\b`)
	badValueRE     = regexp.MustCompile(`bad (?:duration|size) "([^"]*)"`)
)

// locate finds the node a catalog problem is about, or nil when the
// problem names no field found in the file.
func locate(root *yaml.Node, pr catalog.Problem) *yaml.Node {
	if m := unknownFieldRE.FindStringSubmatch(pr.Message); m != nil {
		return findKey(root, m[1], 0)
	}
	// A duration's or size's own error names the value, not the field.
	if m := badValueRE.FindStringSubmatch(pr.Message); m != nil {
		return findScalar(root, m[1], 0)
	}
	field := pr.Field
	if m := structFieldRE.FindStringSubmatch(pr.Message); m != nil {
		field = m[1]
	}
	if field == "" {
		return nil
	}
	cur := root
	for _, part := range strings.Split(field, ".") {
		next := valueOf(cur, part)
		if next == cur {
			break
		}
		cur = next
	}
	return cur
}

// findKey returns the first key node called key, depth first.
func findKey(n *yaml.Node, key string, depth int) *yaml.Node {
	if depth > maxDepth {
		return nil
	}
	for i, c := range n.Content {
		if n.Kind == yaml.MappingNode && i%2 == 0 && c.Value == key {
			return c
		}
		if k := findKey(c, key, depth+1); k != nil {
			return k
		}
	}
	return nil
}

// findScalar returns the first scalar whose value is v, depth first.
func findScalar(n *yaml.Node, v string, depth int) *yaml.Node {
	if depth > maxDepth {
		return nil
	}
	if n.Kind == yaml.ScalarNode && n.Value == v {
		return n
	}
	for _, c := range n.Content {
		if s := findScalar(c, v, depth+1); s != nil {
			return s
		}
	}
	return nil
}

// lineIn returns the line a message names ("line 3: ..."), or 0.
func lineIn(msg string) int {
	if m := lineRE.FindStringSubmatch(msg); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			return n
		}
	}
	return 0
}
