package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// conditionHeaders are the headers StripConditions removes.
var conditionHeaders = []string{"If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since"}

func hasConditions(h http.Header) bool {
	for _, k := range conditionHeaders {
		if len(h.Values(k)) > 0 {
			return true
		}
	}
	return false
}

// sigV4 is the parsed Authorization header of a SigV4-signed request.
type sigV4 struct {
	accessKey, date, region, service string
	signedHeaders                    []string // lowercase
}

const sigV4Algorithm = "AWS4-HMAC-SHA256"

func parseSigV4(auth string) (sigV4, error) {
	var s sigV4
	rest, ok := strings.CutPrefix(auth, sigV4Algorithm+" ")
	if !ok {
		return s, errors.New("not a SigV4 Authorization header")
	}
	for part := range strings.SplitSeq(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Credential":
			f := strings.Split(v, "/")
			if len(f) != 5 {
				return s, fmt.Errorf("credential scope has %d fields, want 5", len(f))
			}
			s.accessKey, s.date, s.region, s.service = f[0], f[1], f[2], f[3]
		case "SignedHeaders":
			s.signedHeaders = strings.Split(v, ";")
		}
	}
	if s.accessKey == "" || len(s.signedHeaders) == 0 {
		return s, errors.New("the Authorization header lacks Credential or SignedHeaders")
	}
	return s, nil
}

// stripConditions removes the conditional headers from r and, when the client had signed any
// of them, re-signs r with the proxy's keys.
func (p *Proxy) stripConditions(r *http.Request) error {
	if !hasConditions(r.Header) {
		return nil
	}
	auth := r.Header.Get("Authorization")
	var sig sigV4
	signed := false
	if strings.HasPrefix(auth, sigV4Algorithm) {
		var err error
		if sig, err = parseSigV4(auth); err != nil {
			return fmt.Errorf("faultproxy: re-sign after stripping conditions: %w", err)
		}
		for _, k := range conditionHeaders {
			signed = signed || (len(r.Header.Values(k)) > 0 && slices.Contains(sig.signedHeaders, strings.ToLower(k)))
		}
	}
	for _, k := range conditionHeaders {
		r.Header.Del(k)
	}
	if !signed {
		return nil
	}
	return p.resign(r, sig)
}

// resign replaces r's signature with one over the same date, scope, payload hash and signed
// headers, less those that are gone.
func (p *Proxy) resign(r *http.Request, sig sigV4) error {
	if p.opts.AccessKey == "" || p.opts.SecretKey == "" {
		return errors.New("faultproxy: a signed conditional header was stripped but Options has no keys to re-sign with")
	}
	if sig.accessKey != p.opts.AccessKey {
		return errors.New("faultproxy: the request is signed with another access key than Options.AccessKey")
	}
	when, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return fmt.Errorf("faultproxy: re-sign: X-Amz-Date: %w", err)
	}
	u := *r.URL
	tmp := &http.Request{Method: r.Method, URL: &u, Host: r.Host, Header: http.Header{}}
	for _, k := range sig.signedHeaders {
		switch k {
		case "host":
		case "content-length":
			tmp.ContentLength = r.ContentLength
		default:
			if vs := r.Header.Values(k); len(vs) > 0 {
				tmp.Header[http.CanonicalHeaderKey(k)] = vs
			}
		}
	}
	creds := aws.Credentials{AccessKeyID: p.opts.AccessKey, SecretAccessKey: p.opts.SecretKey}
	signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = sig.service == "s3" })
	hash := r.Header.Get("X-Amz-Content-Sha256")
	if hash == "" {
		return errors.New("faultproxy: re-sign: the request has no X-Amz-Content-Sha256 header")
	}
	if err := signer.SignHTTP(context.Background(), creds, tmp, hash, sig.service, sig.region, when); err != nil {
		return fmt.Errorf("faultproxy: re-sign: %w", err)
	}
	r.Header.Set("Authorization", tmp.Header.Get("Authorization"))
	return nil
}
