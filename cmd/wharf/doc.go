// Command wharf is the command line of the wharf toolkit, with stable error codes and exit
// codes over every store backend: the export job (export, validate, reconcile, repair, load, parts, runs), the ship
// service and its spool (spool, ship), the backfill job (backfill), leases and their commit
// log (lease), Iceberg tables whose catalog is the bucket (table), and the object tools (ls, du, cat, stat, mb, rb, cp, mv, sync, rm,
// presign, probe, uploads), with version and completion.
//
// The layout: main.go only wires signals to run; root.go builds the command tree and the
// global flags; config.go reads the config file (-c) by one strict loader and turns the global
// flags and the environment into a store.Config (and, for cp and the commands naming one
// object, into transfer.Stores, which tells a plain local path from a file store); backends.go
// is the one blank import of each store backend; exit.go maps every error to its code's exit
// status and prints it; output.go holds the shared formatting; verdicts.go remembers probe
// verdicts in the user's cache directory. Each command has its file (ls.go, export.go…), and
// a command that needs more has files named after it (cp_*.go, backfill_*.go, lease_*.go).
// The test hooks (testhooks.go, backfill_hooks.go, lease_testhooks.go) are built only with
// the wharftest tag.
//
// Exit codes: 0 ok, 1 failed, 2 usage or configuration error, 5 already complete, 75 a lease
// held by another node, 130 interrupted; `wharf lease run` exits with its command's status.
// docs/cli.md and docs/errors.md document every command, flag and code.
package main
