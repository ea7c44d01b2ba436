// Package stdout is a write-only store that streams every Put to standard output (or to any
// io.Writer given to New). It is the destination for pipelines that end in a pipe: no
// manifest, no listing, no reads.
//
// Puts are serialised: the bodies of two concurrent Puts never interleave. Conditional puts
// cannot be honoured and are refused; nothing else is promised. The backend registers as
// WriteOnly, so a job that reads back what it writes (an export) refuses it before it starts.
//
// # URLs
//
//	-
//	stdout://
//
// # Errors
//
// Get, Head, List, Delete, and a Put carrying IfNoneMatch or IfMatch fail with
// store.ErrUnsupported. A Put whose body cannot be read or whose output cannot be written fails
// with store.ErrUnavailable, wrapping the cause; an error that already carries a store kind
// (a body that is another store's object) passes through. A cancelled context returns the
// context's error.
package stdout
