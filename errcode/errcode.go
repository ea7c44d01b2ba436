package errcode

import (
	"errors"
	"fmt"
	"regexp"
	"sync"
)

// Exit statuses. Every code maps to one of them; docs/errors.md explains each.
const (
	ExitOK          = 0   // success
	ExitFailed      = 1   // the operation failed
	ExitUsage       = 2   // usage or configuration error: nothing was attempted
	ExitComplete    = 5   // the destination is already complete: nothing to do
	ExitHeld        = 75  // a lease is held by another node: try again later (EX_TEMPFAIL)
	ExitInterrupted = 130 // cancelled by SIGINT or SIGTERM
)

// Def defines a code. Name, Text, Exit, Class, Section and Meaning are required.
type Def struct {
	Name  string // WHARF_…
	Text  string // what errors of this code say: "object does not exist"
	Exit  int    // one of the Exit… statuses
	Class Class  // what a job does with it: Transient, Operator, Poison, Fatal or Outcome
	// Standing marks a code found in the data or the configuration that a cancellation can
	// never cause: a command cancelled after failing with it still exits with its status.
	Standing bool
	Section  string // the heading of docs/errors.md the code is listed under
	Meaning  string // its row's "Meaning" cell
	Remedy   string // its row's "What to do" cell
}

// Code is one registered code. It is an error (its Text), to be used as a sentinel kind.
type Code struct{ d Def }

func (c *Code) Error() string { return c.d.Text }

// Name is the code's WHARF_… name.
func (c *Code) Name() string { return c.d.Name }

// Code is Name; it lets a *Code satisfy interface{ Code() string }.
func (c *Code) Code() string { return c.d.Name }

// Exit is the process exit status of an error with this code.
func (c *Code) Exit() int { return c.d.Exit }

// Class is what a job does with an error of this code; ClassOf asks it of any error.
func (c *Code) Class() Class { return c.d.Class }

// Standing reports whether a cancellation can never cause this code.
func (c *Code) Standing() bool { return c.d.Standing }

// Doc returns the code's definition: its docs/errors.md row.
func (c *Code) Doc() Def { return c.d }

var (
	mu      sync.Mutex
	byName  = map[string]*Code{}
	ordered []*Code
	namePat = regexp.MustCompile(`^WHARF_[A-Z0-9]+(_[A-Z0-9]+)*$`)
)

// New registers a code and returns it. It panics on a malformed or duplicate definition: codes
// are defined in package variables, so a mistake stops the program at start-up.
func New(d Def) *Code {
	switch {
	case !namePat.MatchString(d.Name):
		panic(fmt.Sprintf("errcode: %q is not a WHARF_… name", d.Name))
	case d.Text == "" || d.Section == "" || d.Meaning == "":
		panic(fmt.Sprintf("errcode: %s needs Text, Section and Meaning", d.Name))
	case d.Class < Outcome || d.Class > Fatal:
		panic(fmt.Sprintf("errcode: %s needs a Class (Transient, Operator, Poison, Fatal or Outcome)", d.Name))
	}
	switch d.Exit {
	case ExitFailed, ExitUsage, ExitComplete, ExitHeld, ExitInterrupted:
	default:
		panic(fmt.Sprintf("errcode: %s: exit status %d is not one of 1, 2, 5, 75, 130", d.Name, d.Exit))
	}
	mu.Lock()
	defer mu.Unlock()
	if _, dup := byName[d.Name]; dup {
		panic(fmt.Sprintf("errcode: %s defined twice", d.Name))
	}
	c := &Code{d: d}
	byName[d.Name] = c
	ordered = append(ordered, c)
	return c
}

// Of returns the first code in err's chain, or nil.
func Of(err error) *Code {
	var c *Code
	if errors.As(err, &c) {
		return c
	}
	return nil
}

// NameOf returns the WHARF_… name of the first code in err's chain, or "".
func NameOf(err error) string {
	if c := Of(err); c != nil {
		return c.Name()
	}
	return ""
}

// Lookup returns the code named name.
func Lookup(name string) (*Code, bool) {
	mu.Lock()
	defer mu.Unlock()
	c, ok := byName[name]
	return c, ok
}

// Remedy is what docs/errors.md says to do about the code named name ("What to do"), or ""
// for a name that is no code.
func Remedy(name string) string {
	if c, ok := Lookup(name); ok {
		return c.d.Remedy
	}
	return ""
}

// All returns every registered code in definition order.
func All() []*Code {
	mu.Lock()
	defer mu.Unlock()
	return append([]*Code(nil), ordered...)
}

// Error is a failure of a job: the operation, what it was done to (a table, a path, a key),
// the code and the cause. It unwraps to both the code and the cause, so errors.Is finds the
// code and anything the cause wraps (a store error keeps its own code reachable).
type Error struct {
	Op   string // "read", "write", "config"…
	What string // the thing at fault, named as the user knows it
	Kind *Code
	Err  error
}

// E returns an *Error.
func E(op, what string, kind *Code, cause error) *Error {
	return &Error{Op: op, What: what, Kind: kind, Err: cause}
}

func (e *Error) Error() string {
	s := e.Op
	if e.What != "" {
		s += " " + e.What
	}
	if s != "" {
		s += ": "
	}
	s += e.Kind.Error()
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the code and the cause.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}
