package faultproxy

import (
	"net/http"
	"strings"
	"sync"
	"time"
)

// Fault is what the proxy does to a request a rule matched.
type Fault int

// The faults; see the package documentation.
const (
	None Fault = iota // forwarded untouched
	Reset
	Status
	Stall
	StallBody
	Truncate
	Lost
	DropBody
	Corrupt
)

func (f Fault) String() string {
	switch f {
	case None:
		return "none"
	case Reset:
		return "reset"
	case Status:
		return "status"
	case Stall:
		return "stall"
	case StallBody:
		return "stall-body"
	case Truncate:
		return "truncate"
	case Lost:
		return "lost"
	case DropBody:
		return "drop-body"
	case Corrupt:
		return "corrupt"
	}
	return "fault(?)"
}

// Rule says which requests get a fault and which.
type Rule struct {
	Method string // "GET", "PUT", …; "" matches any
	Path   string // substring of the request path (decoded); "" matches any
	Query  string // substring of the raw query; "" matches any
	Header string // the request must carry this header (e.g. "If-None-Match"); "" matches any

	Skip  int // let this many matching requests through first
	Times int // apply the fault to this many matching requests; 0 means every one

	Fault Fault

	Status  int    // for Status: the status code (default 503)
	Code    string // for Status: the S3 error code (default by status: SlowDown, InternalError, …)
	Message string // for Status: the error message (default: the code's usual message)

	Delay time.Duration // for Stall and StallBody: how long to wait
	After int64         // for StallBody and Truncate: body bytes sent before the fault; for DropBody: request body bytes kept; for Corrupt: the offset of the byte flipped
}

// Injection is a rule added to a proxy; it reports how often it fired.
type Injection struct {
	rule Rule

	mu      sync.Mutex
	seen    int // matching requests, including skipped ones
	fired   int
	removed bool
}

// Fired returns how many requests the rule has applied its fault to.
func (in *Injection) Fired() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.fired
}

// Remove stops the rule from matching further requests.
func (in *Injection) Remove() {
	in.mu.Lock()
	in.removed = true
	in.mu.Unlock()
}

// matches reports whether r matches the rule's filters.
func (in *Injection) matches(r *http.Request) bool {
	ru := in.rule
	return (ru.Method == "" || strings.EqualFold(ru.Method, r.Method)) &&
		strings.Contains(r.URL.Path, ru.Path) &&
		strings.Contains(r.URL.RawQuery, ru.Query) &&
		(ru.Header == "" || len(r.Header.Values(ru.Header)) > 0)
}

// take decides whether the rule applies to a matching request and spends it if so. A rule
// whose requests are all spent returns false, leaving the request to later rules.
func (in *Injection) take() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.removed || (in.rule.Times > 0 && in.fired >= in.rule.Times) {
		return false
	}
	in.seen++
	if in.seen <= in.rule.Skip {
		return false
	}
	in.fired++
	return true
}

// errorCode returns the S3 error code and message for a Status fault.
func (ru Rule) errorCode() (status int, code, msg string) {
	status = ru.Status
	if status == 0 {
		status = http.StatusServiceUnavailable
	}
	code, msg = defaultCode(status)
	if ru.Code != "" {
		code = ru.Code
	}
	if ru.Message != "" {
		msg = ru.Message
	}
	return status, code, msg
}

func defaultCode(status int) (code, msg string) {
	switch status {
	case http.StatusServiceUnavailable:
		return "SlowDown", "Please reduce your request rate."
	case http.StatusTooManyRequests:
		return "SlowDown", "Please reduce your request rate."
	case http.StatusInternalServerError:
		return "InternalError", "We encountered an internal error. Please try again."
	case http.StatusPreconditionFailed:
		return "PreconditionFailed", "At least one of the pre-conditions you specified did not hold"
	case http.StatusConflict:
		return "ConditionalRequestConflict", "A conflicting conditional operation is currently in progress."
	case http.StatusNotFound:
		return "NoSuchKey", "The specified key does not exist."
	case http.StatusForbidden:
		return "AccessDenied", "Access Denied"
	case http.StatusNotImplemented:
		return "NotImplemented", "A header you provided implies functionality that is not implemented"
	}
	return "FaultProxyError", http.StatusText(status)
}
