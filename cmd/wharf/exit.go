package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/wharfdata/wharf/errcode"
)

// Exit codes. Every error's code says its own (errcode.Code.Exit); docs/errors.md lists them.
const (
	exitOK          = errcode.ExitOK
	exitFailed      = errcode.ExitFailed
	exitUsage       = errcode.ExitUsage
	exitInterrupted = errcode.ExitInterrupted
)

// The codes the CLI adds to those of the packages it composes.
var (
	ErrUsage = errcode.New(errcode.Def{Name: "WHARF_USAGE", Text: "usage error", Exit: errcode.ExitUsage, Class: errcode.Fatal, Section: "Command line",
		Meaning: "Wrong arguments, an unknown flag or command, or a flag value out of range (`--format xml`).",
		Remedy:  "Read `wharf <command> --help`; the message says what was expected."})
	ErrInterrupted = errcode.New(errcode.Def{Name: "WHARF_INTERRUPTED", Text: "interrupted", Exit: errcode.ExitInterrupted, Class: errcode.Outcome, Section: "Command line",
		Meaning: "The command was cancelled by Ctrl-C or SIGTERM. In-flight requests were cancelled, a partial local file was removed, a multipart upload was aborted.",
		Remedy:  "Run it again; nothing half-written was left behind."})
)

// usageError marks a command-line mistake: wrong arguments, an unknown flag or command.
type usageError struct{ err error }

func (e *usageError) Error() string   { return e.err.Error() }
func (e *usageError) Unwrap() []error { return []error{ErrUsage, e.err} }

func usageErr(err error) error {
	var u *usageError
	if err == nil || errors.As(err, &u) {
		return err
	}
	return &usageError{err: err}
}

// exitCode maps err to the process's exit code: its code's exit status. ctx is the
// command's context: an error after it was cancelled is an interruption whatever the error
// says, unless its code is one that a cancellation cannot cause (errcode.Def.Standing): a
// long-running service that stopped on a fatal error and was then told to stop still exits
// with that error.
func exitCode(ctx context.Context, err error) int {
	code := errcode.Of(err)
	var cmd interface{ ExitStatus() int }
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &cmd): // a command wharf ran (lease run): its own status
		return cmd.ExitStatus()
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case ctx.Err() != nil && (code == nil || !code.Standing()):
		return exitInterrupted
	case code == nil:
		return exitFailed
	}
	return code.Exit()
}

// errCode is the WHARF_… code of err: the first one in its chain, or "".
func errCode(err error) string { return errcode.NameOf(err) }

// exit prints err, if any, and returns the exit code.
func (a *app) exit(ctx context.Context, err error) int {
	code := exitCode(ctx, err)
	if err != nil {
		printError(a.err, a.format, err, code)
	}
	return code
}

// printError writes err as one line, `wharf: <message> [CODE]`, or with format json as one
// JSON object {"error":…,"code":…}.
func printError(w io.Writer, format string, err error, exit int) {
	msg, code := err.Error(), errCode(err)
	if exit == exitInterrupted {
		msg, code = "interrupted", ErrInterrupted.Name()
	}
	if format == "json" {
		b, _ := json.Marshal(struct {
			Error string `json:"error"`
			Code  string `json:"code"`
			Exit  int    `json:"exit"`
		}{msg, code, exit})
		fmt.Fprintf(w, "%s\n", b)
		return
	}
	msg = strings.ReplaceAll(msg, "\n", " ")
	if code == "" {
		fmt.Fprintf(w, "wharf: %s\n", msg)
		return
	}
	fmt.Fprintf(w, "wharf: %s [%s]\n", msg, code)
}
