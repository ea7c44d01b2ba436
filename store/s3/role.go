package s3

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials/ec2rolecreds"
	"github.com/aws/aws-sdk-go-v2/credentials/endpointcreds"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/wharfdata/wharf/store/driver"
)

const (
	// roleExpiryWindow: role keys are refreshed this long before they expire.
	roleExpiryWindow = 300 * time.Second
	// roleSourceTimeout bounds one source's answer during a refresh.
	roleSourceTimeout = 10 * time.Second
	// ecsHost serves AWS_CONTAINER_CREDENTIALS_RELATIVE_URI, as in the SDK.
	ecsHost = "http://169.254.170.2"
)

// The role sources, in the order they are tried, as errors and logs name them.
const (
	sourceECS         = "ECS container endpoint"
	sourceWebIdentity = "STS web identity"
	sourceIMDS        = "EC2 instance metadata (IMDSv2)"
)

// roleSource is one workload-role credential source. provider is nil, and why says why, when
// the environment does not configure the source.
type roleSource struct {
	name     string
	provider aws.CredentialsProvider
	why      string
}

// RoleError says that no workload-role source answered, naming each source tried and why.
// It holds only strings, never a credential or an error that could carry one.
type RoleError struct {
	Tried []string
	// Expired is when the keys wharf held expired, if it held any: a refresh found no source.
	Expired time.Time
}

func (e *RoleError) Error() string {
	if !e.Expired.IsZero() {
		return fmt.Sprintf("workload-role keys expired at %s and no source answered a refresh: tried %s",
			e.Expired.UTC().Format(time.RFC3339), strings.Join(e.Tried, "; "))
	}
	return "no workload-role credentials: tried " + strings.Join(e.Tried, "; ")
}

// roleProvider serves workload-role keys: the first of its sources that answers, in order,
// cached and refreshed roleExpiryWindow before they expire. A refresh asks only the source
// the current keys came from while they are valid, so a failing source never swaps in
// another role's keys; if it fails, the still-valid keys are returned and the next request
// tries again. Expired keys are never returned: once they expire, every source is tried again
// in order, and none answering is a *RoleError.
type roleProvider struct {
	sources []roleSource
	timeout time.Duration    // per source, per refresh
	window  time.Duration    // refresh this long before expiry
	now     func() time.Time // the clock; tests replace it before the first request
	log     *slog.Logger

	mu        sync.Mutex
	creds     aws.Credentials // the last keys a source gave; zero before the first
	from      int             // index in sources of the source creds came from
	refreshAt time.Time       // when creds are due for a refresh
	inflight  *roleRefresh    // the refresh running now, if any
}

// roleRefresh is one refresh, shared by every request that waits for it.
type roleRefresh struct {
	done  chan struct{}
	creds aws.Credentials
	err   error
}

// newRoleProvider builds the role sources from the SDK's environment, as it stands when the
// store opens.
func newRoleProvider(awsCfg aws.Config, getenv func(string) string, log *slog.Logger) *roleProvider {
	return &roleProvider{
		sources: []roleSource{ecsSource(awsCfg, getenv), webIdentitySource(awsCfg, getenv), imdsSource(awsCfg, getenv)},
		timeout: roleSourceTimeout,
		window:  roleExpiryWindow,
		now:     time.Now,
		log:     log,
		from:    -1,
	}
}

// Retrieve returns keys that have not expired. Keys outside the refresh window come from the
// cache. Inside it, one request refreshes while the others keep signing with the still-valid
// keys; without valid keys, every request waits for the refresh (or its own ctx).
func (p *roleProvider) Retrieve(ctx context.Context) (aws.Credentials, error) {
	p.mu.Lock()
	now := p.now()
	valid := p.validLocked(now)
	if valid && (!p.creds.CanExpire || now.Before(p.refreshAt)) {
		defer p.mu.Unlock()
		return p.creds, nil
	}
	r := p.inflight
	if r != nil && valid {
		defer p.mu.Unlock()
		return p.creds, nil
	}
	if r == nil {
		only := -1
		if valid {
			only = p.from
		}
		r = &roleRefresh{done: make(chan struct{})}
		p.inflight = r
		// The refresh outlives a caller that gives up: others may be waiting for it, and
		// each source is bounded by p.timeout.
		go p.refresh(context.WithoutCancel(ctx), r, only)
	}
	p.mu.Unlock()
	select {
	case <-r.done:
	case <-ctx.Done():
		return aws.Credentials{}, ctx.Err()
	}
	if r.err == nil {
		return r.creds, nil
	}
	return p.afterFailure(r.err)
}

// validLocked reports whether the cached keys may still sign at now.
func (p *roleProvider) validLocked(now time.Time) bool {
	return p.creds.HasKeys() && (!p.creds.CanExpire || now.Before(p.creds.Expires))
}

// refresh asks the sources (only the one numbered only, when only >= 0) and publishes the
// outcome to r.
func (p *roleProvider) refresh(ctx context.Context, r *roleRefresh, only int) {
	creds, from, err := p.retrieve(ctx, only)
	p.mu.Lock()
	if err == nil {
		p.creds, p.from = creds, from
		p.refreshAt = refreshTime(creds, p.now(), p.window)
		p.log.Debug("workload-role credentials", "source", p.sources[from].name,
			"expires", creds.Expires, "refresh_at", p.refreshAt)
	}
	r.creds, r.err = creds, err
	p.inflight = nil
	p.mu.Unlock()
	close(r.done)
}

// afterFailure decides what a request gets when its refresh failed: the cached keys while
// they are valid (the next request tries again), else the refresh's error.
func (p *roleProvider) afterFailure(err error) (aws.Credentials, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.validLocked(p.now()) {
		p.log.Warn("workload-role credentials: refresh failed; signing with the current keys until they expire",
			"source", p.sources[p.from].name, "expires", p.creds.Expires, "error", err.Error())
		return p.creds, nil
	}
	var re *RoleError
	if p.creds.HasKeys() && errors.As(err, &re) {
		return aws.Credentials{}, &RoleError{Tried: re.Tried, Expired: p.creds.Expires}
	}
	return aws.Credentials{}, err
}

// refreshTime is when creds are due for a refresh: window before they expire, or, for keys
// that arrive already inside the window, halfway to their expiry (not at every request).
func refreshTime(creds aws.Credentials, now time.Time, window time.Duration) time.Time {
	at := creds.Expires.Add(-window)
	if !at.After(now) {
		at = now.Add(creds.Expires.Sub(now) / 2)
	}
	return at
}

// retrieve returns the keys of the first source that answers with keys not yet expired, and
// its index; only >= 0 asks that source alone. None answering is a *RoleError naming each
// source and why.
func (p *roleProvider) retrieve(ctx context.Context, only int) (aws.Credentials, int, error) {
	var tried []string
	for i, s := range p.sources {
		if only >= 0 && i != only {
			continue
		}
		if s.provider == nil {
			tried = append(tried, s.name+" (not configured: "+s.why+")")
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, p.timeout)
		creds, err := s.provider.Retrieve(sctx)
		cancel()
		switch {
		case err != nil:
			tried = append(tried, s.name+" ("+reason(err)+")")
		case !creds.HasKeys():
			tried = append(tried, s.name+" (answered without keys)")
		case creds.CanExpire && !p.now().Before(creds.Expires):
			tried = append(tried, fmt.Sprintf("%s (answered with keys that expired at %s)",
				s.name, creds.Expires.UTC().Format(time.RFC3339)))
		default:
			return creds, i, nil
		}
	}
	return aws.Credentials{}, -1, &RoleError{Tried: tried}
}

// reason shortens a source's error to its first line, at most 300 bytes. The SDK's messages
// hold the operation, status and code, never the keys or tokens sent or received.
func reason(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// ecsSource is the container credential endpoint: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI on
// the ECS agent's address, else AWS_CONTAINER_CREDENTIALS_FULL_URI (EKS Pod Identity, or any
// https URL; plain http only to loopback or the ECS/EKS agent addresses, as in the SDK), with
// AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE (read at each refresh) or
// AWS_CONTAINER_AUTHORIZATION_TOKEN.
func ecsSource(awsCfg aws.Config, getenv func(string) string) roleSource {
	s := roleSource{name: sourceECS}
	endpoint := getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI")
	if rel := getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"); rel != "" {
		endpoint = ecsHost + rel
	} else if endpoint != "" {
		if err := checkContainerURI(endpoint); err != nil {
			s.why = err.Error()
			return s
		}
	}
	if endpoint == "" {
		s.why = "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and AWS_CONTAINER_CREDENTIALS_FULL_URI are not set"
		return s
	}
	s.provider = endpointcreds.New(endpoint, func(o *endpointcreds.Options) {
		o.HTTPClient = awsCfg.HTTPClient
		o.Retryer = aws.NopRetryer{}
		o.AuthorizationToken = getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN")
		if f := getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"); f != "" {
			o.AuthorizationTokenProvider = endpointcreds.TokenProviderFunc(func() (string, error) {
				b, err := os.ReadFile(f)
				if err != nil {
					return "", fmt.Errorf("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: %w", err)
				}
				return strings.TrimSpace(string(b)), nil
			})
		}
	})
	return s
}

// checkContainerURI applies the SDK's rule to AWS_CONTAINER_CREDENTIALS_FULL_URI: https
// anywhere; http only to a loopback host or the ECS/EKS agent addresses (169.254.170.2,
// 169.254.170.23, fd00:ec2::23). Host names other than localhost are not resolved.
func checkContainerURI(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || u.Hostname() == "" {
		return errors.New("AWS_CONTAINER_CREDENTIALS_FULL_URI is not a URL with a host")
	}
	host := u.Hostname()
	switch strings.ToLower(u.Scheme) {
	case "https":
		return nil
	case "http":
		ip := net.ParseIP(host)
		agent := ip != nil && (ip.Equal(net.IPv4(169, 254, 170, 2)) || ip.Equal(net.IPv4(169, 254, 170, 23)) ||
			ip.Equal(net.ParseIP("fd00:ec2::23")))
		if driver.IsLoopback(host) || agent {
			return nil
		}
		return fmt.Errorf("AWS_CONTAINER_CREDENTIALS_FULL_URI: http to %s: only loopback and the ECS/EKS agent addresses may use http", host)
	}
	return fmt.Errorf("AWS_CONTAINER_CREDENTIALS_FULL_URI: scheme %q: want https (or http to loopback)", u.Scheme)
}

// webIdentitySource exchanges the token in AWS_WEB_IDENTITY_TOKEN_FILE (read at each refresh)
// for the keys of AWS_ROLE_ARN with STS AssumeRoleWithWebIdentity. The STS endpoint is the
// SDK's: AWS_ENDPOINT_URL_STS or AWS_ENDPOINT_URL when set, else the region's; an override
// must be https, or http on loopback, since the token travels to it.
func webIdentitySource(awsCfg aws.Config, getenv func(string) string) roleSource {
	s := roleSource{name: sourceWebIdentity}
	tokenFile, roleARN := getenv("AWS_WEB_IDENTITY_TOKEN_FILE"), getenv("AWS_ROLE_ARN")
	if tokenFile == "" || roleARN == "" {
		s.why = "AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN are not both set"
		return s
	}
	client := sts.NewFromConfig(awsCfg)
	if be := client.Options().BaseEndpoint; be != nil {
		if err := (&driver.Common{}).CheckEndpoint("AWS_ENDPOINT_URL_STS", *be); err != nil {
			s.why = "STS endpoint override: " + reason(err)
			return s
		}
	}
	session := getenv("AWS_ROLE_SESSION_NAME")
	if session == "" {
		session = fmt.Sprintf("wharf-%d", time.Now().UnixNano())
	}
	s.provider = stscreds.NewWebIdentityRoleProvider(client, roleARN, stscreds.IdentityTokenFile(tokenFile),
		func(o *stscreds.WebIdentityRoleOptions) { o.RoleSessionName = session })
	return s
}

// imdsSource is the EC2 instance role from IMDSv2 only (a session token first; no IMDSv1
// fallback), at the SDK's endpoint: AWS_EC2_METADATA_SERVICE_ENDPOINT (or the profile's
// ec2_metadata_service_endpoint) when set, else 169.254.169.254. AWS_EC2_METADATA_DISABLED=true
// turns it off.
func imdsSource(awsCfg aws.Config, getenv func(string) string) roleSource {
	s := roleSource{name: sourceIMDS}
	if strings.EqualFold(getenv("AWS_EC2_METADATA_DISABLED"), "true") {
		s.why = "AWS_EC2_METADATA_DISABLED=true"
		return s
	}
	client := imds.NewFromConfig(awsCfg, func(o *imds.Options) { o.EnableFallback = aws.FalseTernary })
	s.provider = ec2rolecreds.New(func(o *ec2rolecreds.Options) { o.Client = client })
	return s
}

// isRoleError reports whether err is the role provider giving up.
func isRoleError(err error) bool {
	var re *RoleError
	return errors.As(err, &re)
}
