// Package errcode is wharf's one registry of error codes. Every failure wharf reports ends in a
// stable WHARF_… code; each code is a *Code value defined once, by the package that owns the
// failure, and carries everything the rest of the program needs to know about it: the short
// text of its errors, the process exit status it maps to, whether a cancellation can cause it,
// and its row in docs/errors.md (section, meaning, what to do).
//
// # Promises
//
//   - A *Code is an error sentinel: errors.Is(err, export.ErrConfig) works through any
//     wrapping, and Of(err) returns the first code in err's chain.
//   - Names are unique: defining a name twice panics at start-up, as does a name that is not
//     WHARF_ followed by capitals, digits and underscores, or an exit status outside the ones
//     below.
//   - The exit status of an error is a property of its code alone (Exit), so a command-line
//     front end maps errors to statuses without knowing any code by name, and a new job adds
//     codes without editing it.
//   - All lists every code defined by the packages linked into the program, in definition
//     order; cmd/wharf's tests check docs/errors.md against it row by row.
//
// Error is the error type of the jobs (export, ship, spool, lease, backfill): the operation,
// what it was done to, the code and the cause. The store layer has its own richer type
// (store.Error) that carries HTTP detail; both unwrap to their code.
package errcode
