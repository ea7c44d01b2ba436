package secret

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
)

// Redacted is what every printed form of a Value shows.
const Redacted = "[REDACTED]"

// Value is a credential. Its zero value is empty.
type Value struct{ v *string }

// New wraps s. Use it for credentials read from a source wharf does not control (an SDK's
// environment variables, say), so they are redacted from then on.
func New(s string) Value { return Value{v: &s} }

// Reveal returns the credential. Call it only to hand the value to an SDK.
func (v Value) Reveal() string {
	if v.v == nil {
		return ""
	}
	return *v.v
}

// IsZero reports whether the value is empty.
func (v Value) IsZero() bool { return v.v == nil || *v.v == "" }

func (Value) String() string               { return Redacted }
func (Value) GoString() string             { return Redacted }
func (Value) Format(f fmt.State, _ rune)   { _, _ = f.Write([]byte(Redacted)) }
func (Value) LogValue() slog.Value         { return slog.StringValue(Redacted) }
func (Value) MarshalJSON() ([]byte, error) { return []byte(`"` + Redacted + `"`), nil }
func (Value) MarshalText() ([]byte, error) { return []byte(Redacted), nil }
func (Value) MarshalYAML() (any, error)    { return Redacted, nil }
func (v *Value) UnmarshalText(b []byte) error {
	return errors.New("secret: a Value is never read from text; use a reference")
}

// Errors returned by Resolve.
var (
	ErrLiteral = errors.New("a literal credential: give a reference (env://NAME or file:///path)")
	ErrUnbound = errors.New("the reference does not resolve")
)

// RefError says which field's reference failed and why. It never holds the value.
type RefError struct {
	Field string // the config field, e.g. "secret_access_key"
	Ref   string // "env://NAME" or "file:///path"; empty for a literal
	Err   error  // ErrLiteral or ErrUnbound, possibly wrapping the cause
}

func (e *RefError) Error() string {
	if e.Ref == "" {
		return fmt.Sprintf("credential %s: %v", e.Field, e.Err)
	}
	return fmt.Sprintf("credential %s = %s: %v", e.Field, e.Ref, e.Err)
}

func (e *RefError) Unwrap() error { return e.Err }

// IsRef reports whether s has the form of a reference.
func IsRef(s string) bool {
	return strings.HasPrefix(s, "env://") || strings.HasPrefix(s, "file://")
}

// Resolve reads the reference ref given for field, reading env:// references with getenv (nil
// reads nothing: every variable is unset). An empty ref resolves to the zero Value.
func Resolve(field, ref string, getenv func(string) string) (Value, error) {
	switch {
	case ref == "":
		return Value{}, nil
	case strings.HasPrefix(ref, "env://"):
		name := strings.TrimPrefix(ref, "env://")
		if name == "" {
			return Value{}, &RefError{Field: field, Ref: ref, Err: fmt.Errorf("%w: no variable named", ErrUnbound)}
		}
		var s string
		if getenv != nil {
			s = getenv(name)
		}
		if s == "" {
			return Value{}, &RefError{Field: field, Ref: ref, Err: fmt.Errorf("%w: environment variable %s is not set", ErrUnbound, name)}
		}
		return New(s), nil
	case strings.HasPrefix(ref, "file://"):
		path := strings.TrimPrefix(ref, "file://")
		if !strings.HasPrefix(path, "/") {
			return Value{}, &RefError{Field: field, Ref: ref, Err: fmt.Errorf("%w: file reference must be absolute (file:///path)", ErrUnbound)}
		}
		b, err := os.ReadFile(path)
		if err != nil {
			// The OS error names the path, never the content.
			return Value{}, &RefError{Field: field, Ref: ref, Err: fmt.Errorf("%w: %v", ErrUnbound, err)}
		}
		s := strings.TrimSuffix(string(b), "\n")
		s = strings.TrimSuffix(s, "\r")
		if s == "" {
			return Value{}, &RefError{Field: field, Ref: ref, Err: fmt.Errorf("%w: file %s is empty", ErrUnbound, path)}
		}
		return New(s), nil
	default:
		return Value{}, &RefError{Field: field, Err: ErrLiteral}
	}
}
