package azure

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/internal/secret"
	"github.com/wharfdata/wharf/store/driver"
)

// call names the request an error came from, for the mapping.
type call struct {
	op  string // "get", "head", "put", "delete", "list", "copy", "make-bucket"
	key string
	// ifMatch is set for a put carrying If-Match: a BlobNotFound answer to it is a failed
	// condition, not a missing object.
	ifMatch bool
	// conditional is set for a conditional put: InvalidBlockList on its commit means another
	// writer committed first.
	conditional bool
}

// mapError is the one place SDK errors become store errors (see driver.MapError).
func (c *Container) mapError(ctx context.Context, cl call, err error) error {
	return driver.MapError(ctx, err, func(err error) error { return c.storeError(ctx, cl, err) })
}

// storeError makes an SDK error a store error. The cause's text is rebuilt from the answer's
// status, code and message, and scrubbed of every credential: the SDK's own texts can hold a
// request URL, and with a SAS token that URL holds the signature.
func (c *Container) storeError(ctx context.Context, cl call, err error) error {
	var body *bodyError
	if errors.As(err, &body) {
		return driver.BodyError(ctx, "put", cl.key, body.err)
	}
	e := &driver.Error{Op: cl.op, Key: cl.key}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		e.Status, e.Reason = re.StatusCode, re.ErrorCode
		e.Kind, e.Fault = classify(cl, e.Status, e.Reason)
		e.Err = &cause{text: c.redact(answerText(re)), err: re}
		if e.Kind == driver.ErrForbidden {
			if se := skewOf(re.RawResponse, e.Err); se != nil {
				e.Kind, e.Err = driver.ErrClockSkewed, se
				return e
			}
		}
		c.explain(e)
		return e
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // its text quotes the request URL, SAS signature included
	}
	e.Err = &cause{text: c.redact(err.Error()), err: err}
	switch {
	case driver.IsTransport(err) || driver.IsContext(err):
		e.Kind, e.Fault = driver.ErrUnavailable, driver.FaultTransport
	default:
		e.Kind = driver.ErrUnavailable
	}
	return e
}

// maxSkew is how far from its clock Azure Storage accepts a request's x-ms-date.
const maxSkew = 15 * time.Minute

// skewOf returns the clock skew behind a refusal, or nil: Azure answers a request dated too far
// from its clock with 403 AuthenticationFailed ("Request date header too old"; a HEAD's
// answer has no body at all), so a refusal whose Date is over 15 minutes from the request's
// x-ms-date is taken as one.
func skewOf(resp *http.Response, answer error) *driver.SkewError {
	if resp == nil || resp.Request == nil {
		return nil
	}
	store, err1 := http.ParseTime(resp.Header.Get("Date"))
	signed, err2 := http.ParseTime(resp.Request.Header.Get("X-Ms-Date"))
	se := &driver.SkewError{Store: store, Signed: signed, Err: answer}
	if err1 != nil || err2 != nil || (se.Skew() <= maxSkew && se.Skew() >= -maxSkew) {
		return nil
	}
	return se
}

// explain adds what a user needs to act on e: the container's name when it is missing, the
// SAS token's expiry when the store refused it after that, the racing writer when staged
// blocks were discarded.
func (c *Container) explain(e *driver.Error) {
	switch {
	case e.Kind == driver.ErrBucketMissing:
		e.Err = fmt.Errorf("container %s does not exist in account %s (create it with wharf mb): %w", c.container, c.account, e.Err)
	case e.Kind == driver.ErrForbidden && !c.creds.sasExpiry.IsZero() && time.Now().After(c.creds.sasExpiry):
		e.Err = fmt.Errorf("the SAS token (%s) expired at %s: %w", c.creds.source, c.creds.sasExpiry.UTC().Format(time.RFC3339), e.Err)
	case e.Reason == "InvalidBlockList":
		e.Err = fmt.Errorf("another write to the key committed first and discarded this upload's staged blocks: %w", e.Err)
	case e.Kind == driver.ErrForbidden && c.creds.mode == modeAnonymous:
		e.Err = fmt.Errorf("%s refused to an anonymous request: %w", e.Op, e.Err)
	case e.Kind == driver.ErrForbidden:
		e.Err = fmt.Errorf("%s refused (%s from %s): %w", e.Op, c.creds.mode, c.creds.source, e.Err)
	}
}

// classify maps an Azure error code and HTTP status to a kind and fault. Codes win over
// statuses.
func classify(cl call, status int, code string) (*errcode.Code, driver.Fault) {
	switch code {
	case "BlobNotFound":
		return driver.MissingObject(cl.ifMatch)
	case "CannotVerifyCopySource":
		if status == 404 {
			return driver.ErrNotExist, driver.FaultNone
		}
		return driver.ErrForbidden, driver.FaultNone
	case "ContainerNotFound", "ResourceNotFound":
		return driver.ErrBucketMissing, driver.FaultNone
	case "BlobAlreadyExists", "ConditionNotMet", "TargetConditionNotMet", "SourceConditionNotMet":
		return driver.ErrPreconditionFailed, driver.FaultNone
	case "InvalidBlockList":
		// Another commit to the key discarded this upload's staged blocks.
		if cl.conditional {
			return driver.ErrPreconditionFailed, driver.FaultNone
		}
		return driver.ErrUnavailable, driver.FaultNone
	case "AuthenticationFailed", "AuthorizationFailure", "AuthorizationPermissionMismatch",
		"AuthorizationResourceTypeMismatch", "AuthorizationServiceMismatch",
		"AuthorizationProtocolMismatch", "AuthorizationSourceIPMismatch",
		"InsufficientAccountPermissions", "AccountIsDisabled", "NoAuthenticationInformation",
		"InvalidAuthenticationInfo", "KeyBasedAuthenticationNotPermitted",
		"PublicAccessNotPermitted":
		return driver.ErrForbidden, driver.FaultNone
	case "InvalidMetadata", "MetadataTooLarge", "InvalidResourceName", "OutOfRangeInput":
		return driver.ErrKeyInvalid, driver.FaultNone
	case "ServerBusy", "InternalError", "OperationTimedOut", "ContainerBeingDeleted",
		"IngressOverAccountLimit", "EgressOverAccountLimit", "TooManyRequests":
		return driver.ErrUnavailable, driver.FaultThrottled
	case "UnsupportedHeader", "UnsupportedQueryParameter", "UnsupportedHttpVerb",
		"FeatureNotSupported", "NotImplemented":
		return driver.ErrUnsupported, driver.FaultNone
	}
	return driver.ClassifyStatus(status, cl.op == "get" || cl.op == "head")
}

// azureError is the XML body of an Azure Storage error answer.
type azureError struct {
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
	Detail  string `xml:"AuthenticationErrorDetail"`
}

// answerText summarises an error answer in one line: the method and path of the request (never
// its query), and the service's message and authentication detail without request ids.
func answerText(re *azcore.ResponseError) string {
	var b strings.Builder
	if r := re.RawResponse; r != nil && r.Request != nil {
		fmt.Fprintf(&b, "%s %s: ", r.Request.Method, r.Request.URL.EscapedPath())
	}
	var ae azureError
	if re.RawResponse != nil {
		if body, err := runtime.Payload(re.RawResponse); err == nil && len(body) > 0 {
			_ = xml.Unmarshal(body, &ae)
		}
	}
	msg := firstLine(ae.Message)
	if msg == "" && re.RawResponse != nil {
		msg = re.RawResponse.Status
	}
	b.WriteString(msg)
	if d := longOpaque.ReplaceAllString(firstLine(ae.Detail), "[REDACTED]"); d != "" {
		b.WriteString(" (")
		b.WriteString(d)
		b.WriteString(")")
	}
	return b.String()
}

// firstLine returns the first line of an answer's text that is not its request id or time.
func firstLine(s string) string {
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "RequestId:") && !strings.HasPrefix(line, "Time:") {
			return line
		}
	}
	return ""
}

// cause is an SDK error with a text of wharf's making. It unwraps to the SDK's error for
// errors.As, but its text never holds a credential.
type cause struct {
	text string
	err  error
}

func (c *cause) Error() string { return c.text }
func (c *cause) Unwrap() error { return c.err }

// longOpaque matches long base64 runs: the request signature an authentication failure's
// detail quotes.
var longOpaque = regexp.MustCompile(`[A-Za-z0-9+/]{32,}={0,2}`)

// sigParam matches a SAS signature in any URL a text may quote.
var sigParam = regexp.MustCompile(`(?i)(sig=)[^&\s"']+`)

// redact removes every credential this container holds from s, in every encoding a URL or a
// message may give it, and any SAS signature a quoted URL carries.
func (c *Container) redact(s string) string {
	for _, v := range c.secrets {
		if r := v.Reveal(); r != "" {
			s = strings.ReplaceAll(s, r, "[REDACTED]")
		}
	}
	return sigParam.ReplaceAllString(s, "${1}[REDACTED]")
}

// secretForms returns the strings that must never appear in a message: the key and the SAS
// token, raw and URL-escaped, and the SAS signature in each of its encodings.
func secretForms(c creds) []secret.Value {
	var out []secret.Value
	add := func(s string) {
		if s != "" {
			out = append(out, secret.New(s), secret.New(url.QueryEscape(s)), secret.New(url.PathEscape(s)))
		}
	}
	add(c.key.Reveal())
	if tok := c.sas.Reveal(); tok != "" {
		add(tok)
		if q, err := url.ParseQuery(tok); err == nil {
			add(q.Get("sig"))
		}
		for p := range strings.SplitSeq(tok, "&") {
			if v, ok := strings.CutPrefix(p, "sig="); ok {
				add(v)
			}
		}
	}
	return out
}

// bodyError is the caller's body failing, as opposed to the store: it is never retried.
type bodyError struct{ err error }

func (b *bodyError) Error() string { return "reading the body: " + b.err.Error() }
func (b *bodyError) Unwrap() error { return b.err }
