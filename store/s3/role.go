package s3

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials/ec2rolecreds"
	"github.com/aws/aws-sdk-go-v2/credentials/endpointcreds"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// Role credentials refresh this long before they expire, and never sign once expired.
const (
	roleExpiryWindow  = 300 * time.Second
	roleSourceTimeout = 10 * time.Second
	ecsHost           = "http://169.254.170.2"
)

// roleSource is one workload-role credential source. make returns nil and the reason when
// the source is not configured in this environment.
type roleSource struct {
	name string
	make func() (aws.CredentialsProvider, string)
}

// roleChain tries each source in order: ECS container endpoint, STS web identity, IMDSv2.
type roleChain struct{ sources []roleSource }

// RoleError says that no workload-role source answered, naming each source tried and why.
// It never holds a credential.
type RoleError struct{ Tried []string }

func (e *RoleError) Error() string {
	return "no workload-role credentials: tried " + strings.Join(e.Tried, "; ")
}

// newRoleProvider returns the role chain, cached, refreshed roleExpiryWindow before expiry.
func newRoleProvider(awsCfg aws.Config) aws.CredentialsProvider {
	chain := &roleChain{sources: []roleSource{
		{"ECS container endpoint", ecsSource},
		{"STS web identity", func() (aws.CredentialsProvider, string) { return webIdentitySource(awsCfg) }},
		{"EC2 instance metadata (IMDSv2)", func() (aws.CredentialsProvider, string) { return imdsSource(awsCfg) }},
	}}
	return aws.NewCredentialsCache(chain, func(o *aws.CredentialsCacheOptions) {
		o.ExpiryWindow = roleExpiryWindow
	})
}

// Retrieve returns the credentials of the first source that answers.
func (c *roleChain) Retrieve(ctx context.Context) (aws.Credentials, error) {
	var tried []string
	for _, s := range c.sources {
		p, why := s.make()
		if p == nil {
			tried = append(tried, s.name+" ("+why+")")
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, roleSourceTimeout)
		creds, err := p.Retrieve(sctx)
		cancel()
		if err == nil {
			return creds, nil
		}
		if ctx.Err() != nil {
			return aws.Credentials{}, ctx.Err()
		}
		tried = append(tried, fmt.Sprintf("%s (%s)", s.name, firstLine(err)))
	}
	return aws.Credentials{}, &RoleError{Tried: tried}
}

func ecsSource() (aws.CredentialsProvider, string) {
	endpoint := os.Getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI")
	if rel := os.Getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"); rel != "" {
		endpoint = ecsHost + rel
	}
	if endpoint == "" {
		return nil, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and AWS_CONTAINER_CREDENTIALS_FULL_URI are not set"
	}
	return endpointcreds.New(endpoint, func(o *endpointcreds.Options) {
		o.AuthorizationToken = os.Getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN")
		if f := os.Getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"); f != "" {
			o.AuthorizationTokenProvider = endpointcreds.TokenProviderFunc(func() (string, error) {
				b, err := os.ReadFile(f)
				return strings.TrimSpace(string(b)), err
			})
		}
	}), ""
}

func webIdentitySource(awsCfg aws.Config) (aws.CredentialsProvider, string) {
	tokenFile, roleARN := os.Getenv("AWS_WEB_IDENTITY_TOKEN_FILE"), os.Getenv("AWS_ROLE_ARN")
	if tokenFile == "" || roleARN == "" {
		return nil, "AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN are not both set"
	}
	session := os.Getenv("AWS_ROLE_SESSION_NAME")
	if session == "" {
		session = fmt.Sprintf("wharf-%d", time.Now().UnixNano())
	}
	client := sts.NewFromConfig(awsCfg)
	return stscreds.NewWebIdentityRoleProvider(client, roleARN, stscreds.IdentityTokenFile(tokenFile),
		func(o *stscreds.WebIdentityRoleOptions) { o.RoleSessionName = session }), ""
}

func imdsSource(awsCfg aws.Config) (aws.CredentialsProvider, string) {
	if strings.EqualFold(os.Getenv("AWS_EC2_METADATA_DISABLED"), "true") {
		return nil, "AWS_EC2_METADATA_DISABLED=true"
	}
	client := imds.NewFromConfig(awsCfg)
	return ec2rolecreds.New(func(o *ec2rolecreds.Options) { o.Client = client }), ""
}

// firstLine shortens a source's error to its first line.
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// isRoleError reports whether err is the role chain giving up.
func isRoleError(err error) bool {
	var re *RoleError
	return errors.As(err, &re)
}
