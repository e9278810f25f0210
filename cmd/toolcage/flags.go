package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/catalog"
)

// jsonFlag is --json, on the root and on every command that prints.
func jsonFlag() cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print the API response as JSON"}
}

// fileFlag is -f/--file for a tool definition.
func fileFlag() cli.Flag {
	return &cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "tool definition `FILE`, YAML or JSON (- for stdin)"}
}

// oneName returns the single NAME argument of a command.
func oneName(cCtx *cli.Context) (string, error) {
	switch n := cCtx.NArg(); {
	case n == 0:
		return "", usageErrorf(cCtx, "missing the tool NAME")
	case n > 1:
		return "", usageErrorf(cCtx, "want one tool NAME, got %d arguments: %s", n, strings.Join(cCtx.Args().Slice(), " "))
	}
	name := cCtx.Args().First()
	if name == "" {
		return "", usageErrorf(cCtx, "the tool NAME is empty")
	}
	return name, nil
}

// noArgs refuses positional arguments on a command that takes none.
func noArgs(cCtx *cli.Context) error {
	if cCtx.NArg() > 0 {
		return usageErrorf(cCtx, "unexpected argument %q", cCtx.Args().First())
	}
	return nil
}

// readInput reads a file, or stdin for "-", bounded to limit bytes.
func (a *app) readInput(path string, limit int64) ([]byte, error) {
	var r io.Reader
	if path == "-" {
		r = a.in
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, inputErrorf("%v", trimPathError(err))
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, inputErrorf("reading %s: %v", displayPath(path), trimPathError(err))
	}
	if int64(len(b)) > limit {
		return nil, inputErrorf("%s is larger than %d bytes", displayPath(path), limit)
	}
	return b, nil
}

// requireFile returns the -f value, refusing its absence.
func requireFile(cCtx *cli.Context) (string, error) {
	path := cCtx.String("file")
	if path == "" {
		return "", usageErrorf(cCtx, "missing -f FILE (a tool definition, YAML or JSON; - for stdin)")
	}
	return path, nil
}

// readDefinition reads a definition file and parses it locally, so a bad
// file fails fast with every problem listed, before the daemon is asked.
func (a *app) readDefinition(path string) (*catalog.Definition, error) {
	data, err := a.readInput(path, catalog.MaxDefinitionBytes)
	if err != nil {
		return nil, err
	}
	def, err := catalog.Parse(data)
	if err != nil {
		return nil, definitionError(displayPath(path), err)
	}
	return def, nil
}

// writtenBody is the request body for a definition: as written, so an
// approval the file does not write reaches the daemon unwritten and gets
// the creator's default there (catalog.DefaultApproval).
func writtenBody(def *catalog.Definition) (json.RawMessage, error) {
	b, err := def.WrittenJSON()
	return json.RawMessage(b), err
}

func displayPath(path string) string {
	if path == "-" {
		return "stdin"
	}
	return path
}

// trimPathError drops the "open " prefix noise of *os.PathError.
func trimPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}
