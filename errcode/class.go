package errcode

// Class is what a job does with a failure. Each code has one (Def.Class), declared beside its
// name and exit status, and every job asks ClassOf instead of listing codes. The classes are
// ordered by severity, least first: when an error holds several codes, the most severe
// decides (see ClassOf).
//
// The class and the exit status answer two questions: the exit status says how a command
// ended (a configuration error is 2 because nothing was attempted), the class says what to
// do about a failure while a job runs. A credential reference that does not resolve exits 2,
// yet a service retries it: it passes once someone sets the variable (Operator).
type Class int

const (
	// Unclassified is the class of an error that holds no code (a plain error, a context
	// error): each job says what it does with one. It is never a code's class.
	Unclassified Class = iota
	// Outcome: the code says how a command ended rather than what failed in it: nothing
	// to do, objects set aside, a verdict, an interruption. No job meets one while it
	// works.
	Outcome
	// Transient: the same request may pass later with nobody acting: a store or source
	// that did not answer, throttling, a clock the store's SDK corrects, a lease another
	// node holds or took over, an answer lost in transit.
	Transient
	// Poison: one item is bad (an object, a file, a part, a value: missing, changed,
	// corrupt); the others are not. Retrying it meets the same; a job that can set the item
	// aside does, and goes on.
	Poison
	// Operator: fails the same until someone acts outside the job's own configuration:
	// credentials refused, missing or expired, permissions, a missing bucket, a full disk,
	// a network path that cuts bodies. Then the same job passes.
	Operator
	// Fatal: the job cannot go on as it is configured or as its data stands: invalid
	// options or URLs, a spool or catalog that cannot be trusted, an object of another
	// writer at the job's own key. Stop; retrying meets the same.
	Fatal
)

// Classes lists every class a code can have, least severe first.
var Classes = []Class{Outcome, Transient, Poison, Operator, Fatal}

var classNames = [...]string{"unclassified", "outcome", "transient", "poison", "operator", "fatal"}

// String is the class's name, as docs/errors.md and logs give it: "transient".
func (c Class) String() string {
	if c < 0 || int(c) >= len(classNames) {
		return "unclassified"
	}
	return classNames[c]
}

var classMeanings = [...]string{
	Outcome:   "Says how a command ended, not what failed in it: nothing to do, objects set aside, a verdict, an interruption. No job meets one while it works.",
	Transient: "The same request may pass later with nobody acting: a store or source that did not answer, throttling, a clock the store's SDK corrects, a lease another node holds or took over, an answer lost in transit.",
	Poison:    "One item is bad (an object, a file, a part, a value: missing, changed, corrupt) and the others are not. Retrying it meets the same.",
	Operator:  "Fails the same until someone acts outside the job's own configuration: credentials refused, missing or expired, permissions, a missing bucket, a full disk, a network path that cuts bodies. Then the same job passes.",
	Fatal:     "The job cannot go on as it is configured or as its data stands: invalid options or URLs, a spool or catalog that cannot be trusted, another writer's object at the job's own key. Retrying meets the same.",
}

// Meaning is the class's row in docs/errors.md.
func (c Class) Meaning() string {
	if c <= Unclassified || c > Fatal {
		return ""
	}
	return classMeanings[c]
}

// ClassOf returns the class of err: the most severe class of the codes anywhere in its tree,
// through any wrapping (Unwrap() error and Unwrap() []error alike) and errors.Join. A joined
// error is as bad as its worst member (a run's failure joined with a failed journal write
// that needs an operator needs an operator), and a code wrapping another can only make the
// class more severe, never hide its cause's (an export write failure wrapping a refused
// credential needs an operator). An error that holds no code, nil, and a context error are
// Unclassified.
func ClassOf(err error) Class {
	best := Unclassified
	walk(err, func(c *Code) {
		if c.d.Class > best {
			best = c.d.Class
		}
	})
	return best
}

// walk calls fn for every *Code in err's tree.
func walk(err error, fn func(*Code)) {
	for err != nil {
		if c, ok := err.(*Code); ok {
			fn(c)
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e, fn)
			}
			return
		default:
			return
		}
	}
}
