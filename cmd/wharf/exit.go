package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/wharfdata/wharf/ship"
	"github.com/wharfdata/wharf/spool"
	"github.com/wharfdata/wharf/store"
)

// Exit codes.
const (
	exitOK          = 0
	exitFailed      = 1   // the operation failed: not found, precondition failed, unavailable…
	exitUsage       = 2   // usage or configuration error: nothing was attempted
	exitComplete    = 5   // the destination is already complete (reserved)
	exitInterrupted = 130 // cancelled by Ctrl-C or SIGTERM
)

// Codes the CLI adds to those of package store.
const (
	codeUsage       = "WHARF_USAGE"
	codeInterrupted = "WHARF_INTERRUPTED"
	codeComplete    = "WHARF_DEST_ALREADY_COMPLETE"
)

// usageError marks a command-line mistake: wrong arguments, an unknown flag or command.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }
func (e *usageError) Code() string  { return codeUsage }

func usageErr(err error) error {
	var u *usageError
	if err == nil || errors.As(err, &u) {
		return err
	}
	return &usageError{err: err}
}

// exitCode maps err to the process's exit code. ctx is the command's context: an error after
// it was cancelled is an interruption whatever the error says, unless its code is one that a
// cancellation cannot cause (standingCodes): a long-running service that stopped on a fatal
// error and was then told to stop still exits with that error.
func exitCode(ctx context.Context, err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case ctx.Err() != nil && !standingCodes[errCode(err)]:
		return exitInterrupted
	}
	return codeExit(errCode(err))
}

// standingCodes are the codes of errors found in the data, never caused by a cancellation.
var standingCodes = map[string]bool{
	ship.ErrObjectKeyCollision.Code():    true,
	spool.ErrCorrupt.Code():              true,
	store.ErrCoordinationUnproven.Code(): true,
}

// usageCodes are the codes of mistakes in the command line or the configuration: nothing was
// attempted, and running again unchanged fails the same way.
var usageCodes = map[string]bool{
	codeUsage:                     true,
	store.ErrConfig.Code():        true,
	store.ErrKeyInvalid.Code():    true,
	"WHARF_EXPORT_CONFIG_INVALID": true,
	"WHARF_CHUNK_KEY_INVALID":     true,
}

// codeExit is the exit code of a WHARF_… code; docs/errors.md lists them all.
func codeExit(code string) int {
	switch {
	case usageCodes[code], strings.HasPrefix(code, "WHARF_ENDPOINT_"), strings.HasPrefix(code, "WHARF_CREDENTIAL_"):
		return exitUsage
	case code == codeComplete:
		return exitComplete
	case code == codeInterrupted:
		return exitInterrupted
	}
	return exitFailed
}

// errCode is the WHARF_… code of err: the first one in its chain, or "".
func errCode(err error) string { return store.Code(err) }

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
		msg, code = "interrupted", codeInterrupted
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
