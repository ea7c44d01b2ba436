// Command wharf is the command line of the wharf toolkit: the export job (export, validate,
// runs) and the object tools (ls, cat, stat, mb, cp, rm, probe) over every store backend, with
// stable error codes and exit codes.
//
// The layout: main.go only wires signals to run; root.go builds the command tree and the
// global flags; config.go turns flags and the environment into a store.Config; target.go
// splits a URL into the store to open and the key inside it; exit.go maps every error to an
// exit code and prints it; output.go holds the shared formatting; one file per command.
//
// Exit codes: 0 ok, 1 failed, 2 usage or configuration error, 5 already complete, 130
// interrupted. docs/cli.md and docs/errors.md document every command, flag and code.
package main
