package main

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/errdefs"
)

// cliError is an error the CLI finds itself: a bad command line, an
// unreadable file, a definition or arguments refused before they reach the
// daemon, a tool that reported an error. It carries its exit status.
type cliError struct {
	msg      string
	code     errdefs.Code // shown in parentheses when set
	exit     int
	problems []api.Problem
	hint     string // printed on its own line after the message
}

func (e *cliError) Error() string { return e.msg }

// usageErrorf reports a bad command line (exit 2) and points at --help.
func usageErrorf(cCtx *cli.Context, format string, args ...any) error {
	return &cliError{
		msg:  fmt.Sprintf(format, args...),
		exit: exitUsage,
		hint: fmt.Sprintf("See '%s --help'.", helpPath(cCtx)),
	}
}

// inputErrorf reports unusable input, such as a missing file (exit 2).
func inputErrorf(format string, args ...any) error {
	return &cliError{msg: fmt.Sprintf(format, args...), exit: exitUsage}
}

// codedErrorf reports a problem found locally that the daemon would report
// with code; it exits as the daemon's answer would.
func codedErrorf(code errdefs.Code, format string, args ...any) error {
	return &cliError{msg: fmt.Sprintf(format, args...), code: code, exit: codeExit(code)}
}

// definitionError reports a definition refused by catalog.Parse, naming
// where it came from.
func definitionError(source string, err error) error {
	var ve *catalog.ValidationError
	if !errors.As(err, &ve) {
		return inputErrorf("%s: %v", source, err)
	}
	ce := &cliError{msg: "invalid tool definition in " + source, code: errdefs.InvalidDefinition, exit: exitUsage}
	for _, p := range ve.Problems {
		ce.problems = append(ce.problems, api.Problem{Field: p.Field, Message: p.Message})
	}
	return ce
}

// toolError is a call that ran and in which the tool reported an error.
func toolError(resp *api.CallResponse) error {
	msg := resp.Error
	if msg == "" {
		msg = "no message"
	}
	who := "the code"
	if resp.Tool != "" {
		who = "tool " + resp.Tool
	}
	return &cliError{msg: fmt.Sprintf("%s reported an error: %s", who, msg), exit: exitFailure}
}

// printError writes err for a person: "Error: <message> (<code>)", then any
// problems and hints, one per line.
func printError(w io.Writer, err error) {
	var (
		ce *cliError
		ae *api.Error
		ve *catalog.ValidationError
		ee *errdefs.Error
		xc cli.ExitCoder
	)
	switch {
	case errors.As(err, &ce):
		writeErrorLine(w, ce.msg, ce.code)
		writeProblems(w, ce.problems)
		if ce.hint != "" {
			fmt.Fprintln(w, ce.hint)
		}
	case errors.As(err, &ae):
		msg := ae.Message
		if ae.Code == errdefs.InvalidDefinition && len(ae.Problems) > 0 {
			msg = "invalid tool definition" // the problems follow, one per line
		}
		writeErrorLine(w, msg, ae.Code)
		writeProblems(w, ae.Problems)
		if ae.CallID != "" {
			fmt.Fprintf(w, "  call id: %s\n", ae.CallID)
		}
		if ae.ApprovalID != "" {
			fmt.Fprintf(w, "  approval id: %s\n", ae.ApprovalID)
		}
		if ae.RetryAfterSeconds > 0 {
			fmt.Fprintf(w, "  retry after: %ss\n", strconv.FormatFloat(ae.RetryAfterSeconds, 'f', -1, 64))
		}
	case errors.Is(err, api.ErrDaemonUnreachable):
		writeErrorLine(w, requestRE.ReplaceAllString(err.Error(), ""), "")
		fmt.Fprintln(w, "Is the daemon running? Start it with 'toolcage daemon', or point --socket (TOOLCAGE_SOCKET) at its socket.")
	case errors.As(err, &ve):
		writeErrorLine(w, "invalid tool definition", errdefs.InvalidDefinition)
		for _, p := range ve.Problems {
			writeProblems(w, []api.Problem{{Field: p.Field, Message: p.Message}})
		}
	case errors.As(err, &ee):
		writeErrorLine(w, err.Error(), ee.Code)
	case errors.As(err, &xc):
		// cli.Exit messages are complete lines by urfave's convention.
		if msg := err.Error(); msg != "" {
			fmt.Fprintln(w, msg)
		}
	default:
		writeErrorLine(w, err.Error(), "")
	}
}

// requestRE matches the request net/http names in a transport error, noise
// next to the socket path: `Get "http://toolcage/v1/tools/x": `.
var requestRE = regexp.MustCompile(`[A-Za-z]+ "http://toolcage/[^"]*": `)

func writeErrorLine(w io.Writer, msg string, code errdefs.Code) {
	if msg == "" {
		msg = string(code)
	}
	if code != "" {
		fmt.Fprintf(w, "Error: %s (%s)\n", msg, code)
		return
	}
	fmt.Fprintf(w, "Error: %s\n", msg)
}

func writeProblems(w io.Writer, ps []api.Problem) {
	for _, p := range ps {
		if p.Field != "" {
			fmt.Fprintf(w, "  - %s: %s\n", p.Field, p.Message)
		} else {
			fmt.Fprintf(w, "  - %s\n", p.Message)
		}
	}
}
