// Package textfmt is how wharf's reports read for people, in one place: times in UTC to the
// second, sizes in binary units to one decimal, "-" for a value that is absent, evidence on
// one line, and aligned "field: value" rows. A package whose result a command prints for
// people (a probe, a validation, a spool's status) writes it with these, so that every report
// shows a time or a size the same way. Nothing here does I/O but the writer it is given.
package textfmt
