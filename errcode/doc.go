// Package errcode is wharf's one registry of error codes. Every failure wharf reports ends in a
// stable WHARF_… code; each code is a *Code value defined once, by the package that owns the
// failure, and carries everything the rest of the program needs to know about it: the short
// text of its errors, the process exit status it maps to, its class (what a job does with
// it), whether a cancellation can cause it, and its row in docs/errors.md (section, meaning,
// what to do).
//
// # Promises
//
//   - A *Code is an error sentinel: errors.Is(err, export.ErrConfig) works through any
//     wrapping, and Of(err) returns the first code in err's chain.
//   - Names are unique: defining a name twice panics at start-up, as does a name that is not
//     WHARF_ followed by capitals, digits and underscores, an exit status outside the ones
//     below, or a missing class.
//   - The exit status of an error is a property of its code alone (Exit), so a command-line
//     front end maps errors to statuses without knowing any code by name, and a new job adds
//     codes without editing it.
//   - Every code has a class (Class: Transient, Operator, Poison, Fatal or Outcome), declared
//     in its Def. ClassOf(err) is the most severe class of the codes
//     anywhere in err's tree, through wrapping and errors.Join; an error with no code is
//     Unclassified. Jobs ask ClassOf what to do with a failure (retry it, count it toward an
//     operator's attention, set its item aside, stop) rather than list codes, so a new code
//     is handled by every job as its class says.
//   - All lists every code defined by the packages linked into the program, in definition
//     order; cmd/wharf's tests check docs/errors.md against it row by row.
//
// Error is the error type of the jobs (export, ship, spool, lease, backfill): the operation,
// what it was done to, the code and the cause. The store layer has its own richer type
// (store.Error) that carries HTTP detail; both unwrap to their code.
package errcode
