package fs

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
)

// readResult is read_file's value: the lines start_line to end_line (from
// 1, inclusive) of the file, at most the read cap of bytes of them.
type readResult struct {
	Path      string `json:"path"`
	Content   string `json:"content"`
	StartLine int64  `json:"start_line"`
	EndLine   int64  `json:"end_line"` // the last line returned
	// Truncated: the selection went on past the read cap (or the file
	// past end_line is not counted: see EOF).
	Truncated bool `json:"truncated"`
	// EOF: the file ends within what was returned.
	EOF bool `json:"eof"`
}

func readFile(ctx context.Context, root *os.Root, c *executors.FSCall) (any, error) {
	p, err := relPath(c.Path, c.Root, false)
	if err != nil {
		return nil, err
	}
	start, end := c.StartLine, c.EndLine
	switch {
	case start < 0 || end < 0:
		return nil, errdefs.Errorf(errdefs.InvalidArguments, "read_file: start_line and end_line count from 1")
	case end > 0 && start > end:
		return nil, errdefs.Errorf(errdefs.InvalidArguments, "read_file: start_line %d is after end_line %d", start, end)
	}
	if start == 0 {
		start = 1
	}
	f, _, err := openRegular(root, p, "read_file")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	res := readResult{Path: cleanRel(p), StartLine: start, EndLine: start - 1}
	var out bytes.Buffer
	for line := int64(1); ; line++ {
		if line%4096 == 0 {
			if err := checkCtx(ctx); err != nil {
				return nil, err
			}
		}
		if end > 0 && line > end {
			break
		}
		text, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long line: keep reading it in pieces.
			whole := append([]byte(nil), text...)
			for errors.Is(err, bufio.ErrBufferFull) {
				text, err = r.ReadSlice('\n')
				if line >= start && int64(len(whole)) <= c.MaxReadBytes {
					whole = append(whole, text...)
				}
			}
			text = whole
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, pathError("read_file", p, err)
		}
		if line >= start && len(text) > 0 {
			if int64(out.Len()+len(text)) > c.MaxReadBytes {
				out.Write(cutUTF8(text, int(c.MaxReadBytes)-out.Len()))
				res.Truncated = true
				break
			}
			out.Write(text)
			res.EndLine = line
		}
		if errors.Is(err, io.EOF) {
			res.EOF = true
			break
		}
	}
	if start > 1 && res.EndLine < start && !res.Truncated {
		return nil, errdefs.Errorf(errdefs.InvalidArguments, "read_file %s: start_line %d is past the end of the file", p, start)
	}
	res.Content = strings.ToValidUTF8(out.String(), "\uFFFD")
	return res, nil
}

// cutUTF8 is b cut to at most n bytes, on a character boundary.
func cutUTF8(b []byte, n int) []byte {
	if n <= 0 {
		return nil
	}
	if n >= len(b) {
		return b
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return b[:n]
}

// writeResult is write_file's and edit_file's value.
type writeResult struct {
	Path    string `json:"path"`
	Bytes   int    `json:"bytes"`
	Created bool   `json:"created,omitempty"`
	// Replaced is edit_file's count of replacements (always 1).
	Replaced int `json:"replaced,omitempty"`
}

func writeFile(ctx context.Context, root *os.Root, c *executors.FSCall) (any, error) {
	p, err := relPath(c.Path, c.Root, false)
	if err != nil {
		return nil, err
	}
	if int64(len(c.Content)) > c.MaxWriteBytes {
		return nil, errdefs.LimitError(errdefs.LimitFileSize, "write_file %s: content is %d bytes, over the write cap of %d", p, len(c.Content), c.MaxWriteBytes)
	}
	if dir := path.Dir(p); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return nil, pathError("write_file", dir, err)
		}
	}
	_, statErr := root.Lstat(p)
	if err := replaceFile(root, p, []byte(c.Content)); err != nil {
		return nil, pathError("write_file", p, err)
	}
	return writeResult{Path: cleanRel(p), Bytes: len(c.Content), Created: errors.Is(statErr, iofs.ErrNotExist)}, nil
}

func editFile(ctx context.Context, root *os.Root, c *executors.FSCall) (any, error) {
	p, err := relPath(c.Path, c.Root, false)
	if err != nil {
		return nil, err
	}
	if c.Find == "" {
		return nil, errdefs.Errorf(errdefs.InvalidArguments, "edit_file: find is empty")
	}
	old, err := readCapped(root, p, c.MaxWriteBytes, "edit_file")
	if err != nil {
		return nil, err
	}
	updated, err := edited(p, string(old), c)
	if err != nil {
		return nil, err
	}
	if err := replaceFile(root, p, []byte(updated)); err != nil {
		return nil, pathError("edit_file", p, err)
	}
	return writeResult{Path: cleanRel(p), Bytes: len(updated), Replaced: 1}, nil
}

// edited is old with c's one edit made, or why it cannot be.
func edited(p, old string, c *executors.FSCall) (string, error) {
	switch n := strings.Count(old, c.Find); n {
	case 1:
	case 0:
		return "", errdefs.Errorf(errdefs.InvalidArguments, "edit_file %s: the text to find is not in the file; read it again and copy the text exactly", p)
	default:
		return "", errdefs.Errorf(errdefs.InvalidArguments, "edit_file %s: the text to find occurs %d times; give more of the surrounding text so it occurs exactly once", p, n)
	}
	updated := strings.Replace(old, c.Find, c.Replace, 1)
	if int64(len(updated)) > c.MaxWriteBytes {
		return "", errdefs.LimitError(errdefs.LimitFileSize, "edit_file %s: the edited file would be %d bytes, over the write cap of %d", p, len(updated), c.MaxWriteBytes)
	}
	return updated, nil
}

// readCapped reads the regular file p, refusing one over limit bytes.
func readCapped(root *os.Root, p string, limit int64, op string) ([]byte, error) {
	f, _, err := openRegular(root, p, op)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, pathError(op, p, err)
	}
	if int64(len(b)) > limit {
		return nil, errdefs.LimitError(errdefs.LimitFileSize, "%s %s: the file is over the cap of %d bytes", op, p, limit)
	}
	return b, nil
}

// openNoWait is how every file and directory is opened for reading: an
// open that cannot wait (O_NONBLOCK: a FIFO with no writer would hold it
// until the call's timeout) and makes no terminal the controlling one.
// What it opened is then checked on the descriptor itself (fstat), so
// the check and the open are one: a name swapped for a FIFO, socket or
// device in between is refused, not read.
const openNoWait = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY

// openRegular opens p for reading and refuses anything but a regular
// file (invalid_arguments naming what it is).
func openRegular(root *os.Root, p, op string) (*os.File, os.FileInfo, error) {
	f, err := root.OpenFile(p, openNoWait, 0)
	if err != nil {
		// A socket cannot be opened at all (ENXIO), a device not on a
		// nodev mount: say what it is rather than how the open failed.
		if fi, lerr := root.Lstat(p); lerr == nil && fi.Mode()&(iofs.ModeNamedPipe|iofs.ModeSocket|iofs.ModeDevice) != 0 {
			return nil, nil, errdefs.Errorf(errdefs.InvalidArguments, "%s %s: is %s, not a regular file; only regular files are read", op, p, what(fi.Mode()))
		}
		return nil, nil, pathError(op, p, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, pathError(op, p, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, errdefs.Errorf(errdefs.InvalidArguments, "%s %s: is %s, not a regular file; only regular files are read", op, p, what(fi.Mode()))
	}
	return f, fi, nil
}

// openDir opens the directory p (O_DIRECTORY: anything else is refused
// by the open itself, which so never waits on a FIFO).
func openDir(root *os.Root, p, op string) (*os.File, error) {
	f, err := root.OpenFile(p, openNoWait|syscall.O_DIRECTORY, 0)
	if errors.Is(err, syscall.ENOTDIR) {
		if fi, lerr := root.Lstat(p); lerr == nil {
			return nil, errdefs.Errorf(errdefs.InvalidArguments, "%s %s: is %s, not a directory", op, p, what(fi.Mode()))
		}
	}
	if err != nil {
		return nil, pathError(op, p, err)
	}
	return f, nil
}

// what names a file's type for an error.
func what(m iofs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a regular file"
	case m&iofs.ModeSymlink != 0:
		return "a symlink"
	case m&iofs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&iofs.ModeSocket != 0:
		return "a socket"
	case m&iofs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// replaceFile writes data to p whole or not at all: a temporary file
// beside it, renamed over it. The mode of a file it replaces is kept.
func replaceFile(root *os.Root, p string, data []byte) error {
	mode := os.FileMode(0o644)
	if fi, err := root.Lstat(p); err == nil {
		if fi.IsDir() {
			return &os.PathError{Op: "write", Path: p, Err: errIsDir}
		}
		if fi.Mode().IsRegular() {
			mode = fi.Mode().Perm()
		}
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := path.Join(path.Dir(p), ".toolcage-"+hex.EncodeToString(rnd[:])+".tmp")
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, p)
	}
	if err != nil {
		_ = root.Remove(tmp)
	}
	return err
}

var errIsDir = errors.New("is a directory")

// deleteResult is delete_file's value.
type deleteResult struct {
	Path    string `json:"path"`
	Deleted bool   `json:"deleted"`
}

func deleteFile(ctx context.Context, root *os.Root, c *executors.FSCall) (any, error) {
	p, err := relPath(c.Path, c.Root, false)
	if err != nil {
		return nil, err
	}
	fi, err := root.Lstat(p)
	if err != nil {
		return nil, pathError("delete_file", p, err)
	}
	if fi.IsDir() {
		return nil, errdefs.Errorf(errdefs.InvalidArguments, "delete_file %s: is a directory; delete_file removes files", p)
	}
	if err := root.Remove(p); err != nil {
		return nil, pathError("delete_file", p, err)
	}
	return deleteResult{Path: cleanRel(p), Deleted: true}, nil
}

// entry is one file of list_files, glob and file_info.
type entry struct {
	Path     string    `json:"path"`
	Type     string    `json:"type"`
	Size     int64     `json:"size"`
	Mode     string    `json:"mode,omitempty"`
	Modified time.Time `json:"modified,omitzero"`
	Target   string    `json:"target,omitempty"` // a symlink's text
}

// listResult is list_files' and glob's value.
type listResult struct {
	Entries   []entry `json:"entries"`
	Truncated bool    `json:"truncated"`
}

func listFiles(ctx context.Context, root *os.Root, c *executors.FSCall) (any, error) {
	p, err := relPath(c.Path, c.Root, true)
	if err != nil {
		return nil, err
	}
	f, err := openDir(root, p, "list_files")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	res := listResult{Entries: []entry{}}
	for {
		if err := checkCtx(ctx); err != nil {
			return nil, err
		}
		des, err := f.ReadDir(256)
		for _, de := range des {
			if len(res.Entries) >= c.MaxMatches {
				res.Truncated = true
				return res, nil
			}
			e := entry{Path: cleanRel(path.Join(p, de.Name())), Type: fmtMode(de.Type())}
			if fi, err := de.Info(); err == nil {
				e.Size = fi.Size()
			}
			res.Entries = append(res.Entries, e)
		}
		if errors.Is(err, io.EOF) || len(des) == 0 {
			break
		}
		if err != nil {
			return nil, pathError("list_files", p, err)
		}
	}
	return res, nil
}

func fileInfo(ctx context.Context, root *os.Root, c *executors.FSCall) (any, error) {
	p, err := relPath(c.Path, c.Root, true)
	if err != nil {
		return nil, err
	}
	fi, err := root.Lstat(p)
	if err != nil {
		return nil, pathError("file_info", p, err)
	}
	e := entry{Path: cleanRel(p), Type: fmtMode(fi.Mode()), Size: fi.Size(), Mode: fi.Mode().Perm().String(), Modified: fi.ModTime().UTC()}
	if fi.Mode()&iofs.ModeSymlink != 0 {
		e.Target, _ = root.Readlink(p)
	}
	return e, nil
}

// walk visits the files under dir (relative to root) in lexical order,
// skipping .git, through the root: a symlink is reported, never followed.
func walk(ctx context.Context, root *os.Root, dir string, visit func(p string, d iofs.DirEntry) (stop bool, err error)) error {
	visits := 0
	return iofs.WalkDir(noWaitFS{root}, dir, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil // an unreadable entry below: skipped
		}
		if visits++; visits > maxVisits {
			return errTooMany
		}
		if visits%1024 == 0 {
			if err := checkCtx(ctx); err != nil {
				return err
			}
		}
		if d.IsDir() && d.Name() == ".git" && p != dir {
			return iofs.SkipDir
		}
		stop, err := visit(p, d)
		if err != nil {
			return err
		}
		if stop {
			return iofs.SkipAll
		}
		return nil
	})
}

var errTooMany = errors.New("too many entries")

// noWaitFS is the root as walk reads it: every open is openNoWait, so a
// directory an entry named that is a FIFO by the time it is opened is an
// error (skipped), not a wait until the call's timeout.
type noWaitFS struct{ root *os.Root }

func (n noWaitFS) Open(name string) (iofs.File, error) {
	return n.root.OpenFile(name, openNoWait, 0)
}

// ReadDir implements fs.ReadDirFS: the entries of name, sorted by name.
func (n noWaitFS) ReadDir(name string) ([]iofs.DirEntry, error) {
	f, err := n.root.OpenFile(name, openNoWait|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	slices.SortFunc(des, func(a, b iofs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return des, err
}

func glob(ctx context.Context, root *os.Root, c *executors.FSCall) (any, error) {
	pat := strings.TrimPrefix(c.Pattern, "./")
	if pat == "" {
		return nil, errdefs.Errorf(errdefs.InvalidArguments, "glob: pattern is empty")
	}
	if strings.HasPrefix(pat, "/") || slicesContains(strings.Split(pat, "/"), "..") {
		return nil, errdefs.Errorf(errdefs.PolicyDenied, "glob: pattern %q leads out of the workspace; patterns are relative to it", c.Pattern)
	}
	parts := strings.Split(path.Clean(pat), "/")
	for _, part := range parts {
		if _, err := path.Match(part, ""); err != nil {
			return nil, errdefs.Errorf(errdefs.InvalidArguments, "glob: bad pattern %q: %v", c.Pattern, err)
		}
	}
	res := listResult{Entries: []entry{}}
	err := walk(ctx, root, ".", func(p string, d iofs.DirEntry) (bool, error) {
		if p == "." || !matchGlob(parts, strings.Split(p, "/")) {
			return false, nil
		}
		if len(res.Entries) >= c.MaxMatches {
			res.Truncated = true
			return true, nil
		}
		e := entry{Path: p, Type: fmtMode(d.Type())}
		if fi, err := d.Info(); err == nil {
			e.Size = fi.Size()
		}
		res.Entries = append(res.Entries, e)
		return false, nil
	})
	if errors.Is(err, errTooMany) {
		res.Truncated = true
		err = nil
	}
	if err != nil {
		return nil, pathError("glob", ".", err)
	}
	return res, nil
}

func slicesContains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// matchGlob matches path components against pattern components, where
// "**" matches any number of components (none included).
func matchGlob(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if matchGlob(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// match is one line search found.
type match struct {
	Path string `json:"path"`
	Line int64  `json:"line"`
	Text string `json:"text"`
}

// searchResult is search's value.
type searchResult struct {
	Matches   []match `json:"matches"`
	Truncated bool    `json:"truncated"`
	// Skipped counts files left out: binary, or over the read cap.
	Skipped int `json:"skipped,omitempty"`
}

func search(ctx context.Context, root *os.Root, c *executors.FSCall) (any, error) {
	if c.Pattern == "" {
		return nil, errdefs.Errorf(errdefs.InvalidArguments, "search: pattern is empty")
	}
	if len(c.Pattern) > 4096 {
		return nil, errdefs.Errorf(errdefs.InvalidArguments, "search: pattern is longer than 4096 bytes")
	}
	// RE2: matching time is linear in the text, whatever the pattern.
	re, err := regexp.Compile(c.Pattern)
	if err != nil {
		return nil, errdefs.Errorf(errdefs.InvalidArguments, "search: bad regular expression: %v", err)
	}
	dir, err := relPath(c.Path, c.Root, true)
	if err != nil {
		return nil, err
	}
	res := searchResult{Matches: []match{}}
	err = walk(ctx, root, path.Clean(dir), func(p string, d iofs.DirEntry) (bool, error) {
		if !d.Type().IsRegular() {
			return false, nil
		}
		stop, skipped, err := searchFile(ctx, root, p, re, c, &res)
		if skipped {
			res.Skipped++
		}
		return stop, err
	})
	if errors.Is(err, errTooMany) {
		res.Truncated = true
		err = nil
	}
	if err != nil {
		return nil, pathError("search", dir, err)
	}
	return res, nil
}

func searchFile(ctx context.Context, root *os.Root, p string, re *regexp.Regexp, c *executors.FSCall, res *searchResult) (stop, skipped bool, err error) {
	// The entry said regular file; the open checks again what it got.
	f, fi, err := openRegular(root, p, "search")
	if err != nil {
		return false, true, nil
	}
	defer f.Close()
	if fi.Size() > c.MaxReadBytes {
		return false, true, nil
	}
	data, err := io.ReadAll(io.LimitReader(f, c.MaxReadBytes+1))
	if err != nil || int64(len(data)) > c.MaxReadBytes {
		return false, true, nil
	}
	if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
		return false, true, nil // binary
	}
	for i, line := range bytes.Split(data, []byte("\n")) {
		if !re.Match(line) {
			continue
		}
		if len(res.Matches) >= c.MaxMatches {
			res.Truncated = true
			return true, false, nil
		}
		text := line
		if len(text) > maxLineBytes {
			text = cutUTF8(text, maxLineBytes)
		}
		res.Matches = append(res.Matches, match{Path: p, Line: int64(i + 1), Text: strings.ToValidUTF8(string(text), "\uFFFD")})
	}
	return false, false, checkCtx(ctx)
}
