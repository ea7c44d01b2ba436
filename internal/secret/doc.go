// Package secret holds credentials so that they cannot leak by accident, and resolves the
// references that configuration gives instead of literal credentials.
//
// A Value prints, logs, formats and marshals as "[REDACTED]" in every form (fmt verbs, slog,
// JSON, text); only Reveal returns the bytes, and only code that signs a request calls it.
//
// Configuration never holds a credential itself, only a reference:
//
//	env://NAME       the whole value of environment variable NAME
//	file:///path     the whole content of the file, one trailing newline trimmed
//
// Resolve refuses anything else as a literal (ErrLiteral), and a reference that does not
// resolve (ErrUnbound) is reported by the variable name or path, never by a value.
package secret
