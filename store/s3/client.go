package s3

import (
	"cmp"
	"context"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/logging"

	"github.com/wharfdata/wharf/store/driver"
)

// defaultRegion is used when neither the config nor the SDK's environment names a region.
const defaultRegion = "us-east-1"

// target is where a Bucket sends its requests.
type target struct {
	endpoint string // "" for AWS itself (virtual-hosted style)
	region   string // "" lets the SDK's environment decide
}

// targetFor resolves the endpoint and region of loc: r2 URLs name the account whose endpoint
// serves them, in region "auto".
func targetFor(loc driver.Location, o *Options) target {
	t := target{endpoint: o.Endpoint, region: o.Region}
	if loc.Scheme != "r2" {
		return t
	}
	if t.endpoint == "" {
		t.endpoint = "https://" + loc.Account + ".r2.cloudflarestorage.com"
	}
	if t.region == "" {
		t.region = "auto"
	}
	return t
}

// newClient builds the SDK client: SDK retries off (the store's RetryPolicy is the only one),
// the HTTP client of driver.NewHTTPClient, path-style addressing on a custom endpoint, and no
// checksums beyond what an operation requires.
func newClient(ctx context.Context, loc driver.Location, o *Options, c *driver.Common) (*s3.Client, target, error) {
	t := targetFor(loc, o)
	awsCfg, err := loadAWSConfig(ctx, t.region, o.Profile, c.Log())
	if err != nil {
		return nil, t, &driver.Error{Op: "open", Key: loc.String(), Kind: driver.ErrConfig,
			Err: fmt.Errorf("loading the AWS SDK configuration: %w", err)}
	}
	hc, err := httpClient(c)
	if err != nil {
		return nil, t, &driver.Error{Op: "open", Key: loc.String(), Kind: driver.ErrConfig, Err: err}
	}
	t.region = awsCfg.Region
	if t.endpoint == "" {
		// The AWS profile's endpoint_url (or its services section's, for S3), as the AWS
		// tools read it, under the same rules as any endpoint.
		if be := s3.NewFromConfig(awsCfg).Options().BaseEndpoint; be != nil && *be != "" {
			if err := c.CheckEndpointWaived("the AWS configuration's endpoint_url", *be, o.waivers()); err != nil {
				return nil, t, err
			}
			t.endpoint = *be
		}
	}
	creds, err := credentialsFor(o, c, awsCfg)
	if err != nil {
		return nil, t, err
	}
	awsCfg.Credentials = creds
	hook := testClientOptions(c)
	client := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		o.Retryer = aws.NopRetryer{}
		o.HTTPClient = hc
		// Only the checked endpoint is ever used: AWS_ENDPOINT_URL from the environment
		// would bypass Config.Check and the allowlist.
		o.BaseEndpoint = nil
		if t.endpoint != "" {
			o.BaseEndpoint = aws.String(t.endpoint)
			o.UsePathStyle = true
		}
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		o.DisableLogOutputChecksumValidationSkipped = true
		// Bodies are not hashed for the signature: it costs CPU per byte and needs a
		// seekable body. TLS (or loopback) carries them.
		o.APIOptions = append(o.APIOptions, v4.SwapComputePayloadSHA256ForUnsignedPayloadMiddleware)
		if hook != nil {
			hook(o) // a wharftest build's hooks (testhooks.go)
		}
	})
	return client, t, nil
}

// loadAWSConfig reads the SDK's environment (region, profile, default credential chain). Its
// HTTP client serves only credential sources (STS, IMDS, SSO); S3 requests use httpClient.
func loadAWSConfig(ctx context.Context, region, profile string, log *slog.Logger) (aws.Config, error) {
	opts := []func(*config.LoadOptions) error{
		config.WithRetryer(func() aws.Retryer { return aws.NopRetryer{} }),
		// The SDK's own notices (an IMDSv1 fallback, say) go through wharf's logger, not
		// straight to stderr.
		config.WithLogger(logging.LoggerFunc(func(c logging.Classification, format string, v ...any) {
			level := slog.LevelDebug
			if c == logging.Warn {
				level = slog.LevelWarn
			}
			log.Log(context.Background(), level, fmt.Sprintf(format, v...), "component", "aws-sdk")
		})),
		config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
		config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired),
	}
	if region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	if profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(profile))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, err
	}
	if awsCfg.Region == "" {
		awsCfg.Region = defaultRegion
	}
	return awsCfg, nil
}

// httpClient returns driver.NewHTTPClient of the policy, trusting AWS_CA_BUNDLE when it is
// set, as the SDK's own client would.
func httpClient(c *driver.Common) (*http.Client, error) {
	hc := driver.NewHTTPClient(c.RetryPolicy())
	path := c.Env(EnvCABundle)
	if path == "" {
		return hc, nil
	}
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("AWS_CA_BUNDLE: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) || !driver.SetRootCAs(hc, pool) {
		return nil, fmt.Errorf("AWS_CA_BUNDLE %s: no PEM certificate in it", path)
	}
	return hc, nil
}

// credentialsFor returns the credentials provider cfg asks for: none (anonymous), static keys
// read from their references, workload-role credentials, or the SDK's default chain.
func credentialsFor(o *Options, c *driver.Common, awsCfg aws.Config) (aws.CredentialsProvider, error) {
	switch {
	case o.Anonymous:
		return aws.AnonymousCredentials{}, nil
	case o.Credentials == "role":
		return newRoleProvider(awsCfg, c.Env, c.Log()), nil
	case o.AccessKeyID != "" || o.SecretAccessKey != "":
		return staticCredentials(o, c)
	}
	return &defaultChain{next: awsCfg.Credentials, getenv: c.Env, profile: o.Profile}, nil
}

// defaultChain is the AWS SDK's default credential chain, which names every source it tried
// when none has credentials: a *driver.Error of kind ErrNoCredentials, before any request is
// sent, instead of the SDK's last source's answer (an instance-metadata 403 reads as if the
// store had refused).
type defaultChain struct {
	next    aws.CredentialsProvider
	getenv  func(string) string
	profile string // the profile option, when one was given
}

func (d *defaultChain) Retrieve(ctx context.Context) (aws.Credentials, error) {
	creds, err := d.next.Retrieve(ctx)
	if err == nil || ctx.Err() != nil {
		return creds, err
	}
	return creds, &driver.Error{Op: "credentials", Kind: driver.ErrNoCredentials,
		Err: fmt.Errorf("tried %s; the last said: %w", strings.Join(d.tried(), ", "), err)}
}

// tried names the sources of the default chain, in its order, as this environment sets them.
func (d *defaultChain) tried() []string {
	set := func(names ...string) bool {
		for _, n := range names {
			if d.getenv(n) != "" {
				return true
			}
		}
		return false
	}
	out := []string{"the environment (AWS_ACCESS_KEY_ID unset)"}
	if set("AWS_ACCESS_KEY_ID") {
		out[0] = "the environment (AWS_ACCESS_KEY_ID without AWS_SECRET_ACCESS_KEY)"
	}
	profile := cmp.Or(d.profile, d.getenv("AWS_PROFILE"), "default")
	files := cmp.Or(d.getenv("AWS_CONFIG_FILE"), "~/.aws/config") + " and " +
		cmp.Or(d.getenv("AWS_SHARED_CREDENTIALS_FILE"), "~/.aws/credentials")
	if d.profile != "" {
		// A profile given as an option is read first and alone, as aws-cli's --profile: the
		// SDK passes over the environment's keys.
		return []string{fmt.Sprintf("profile %q (given as the profile option, so the environment's keys are not read) in %s", profile, files)}
	}
	out = append(out, fmt.Sprintf("profile %q in %s", profile, files))
	if set("AWS_WEB_IDENTITY_TOKEN_FILE") {
		out = append(out, "web identity (AWS_WEB_IDENTITY_TOKEN_FILE)")
	}
	if set("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI") {
		out = append(out, "the container credentials endpoint")
	}
	if strings.EqualFold(d.getenv("AWS_EC2_METADATA_DISABLED"), "true") {
		return append(out, "EC2 instance metadata (off: AWS_EC2_METADATA_DISABLED=true)")
	}
	return append(out, "EC2 instance metadata")
}

func staticCredentials(o *Options, c *driver.Common) (aws.CredentialsProvider, error) {
	id, err := c.Resolve("access_key_id", o.AccessKeyID)
	if err != nil {
		return nil, err
	}
	key, err := c.Resolve("secret_access_key", o.SecretAccessKey)
	if err != nil {
		return nil, err
	}
	token, err := c.Resolve("session_token", o.SessionToken)
	if err != nil {
		return nil, err
	}
	return credentials.NewStaticCredentialsProvider(id.Reveal(), key.Reveal(), token.Reveal()), nil
}
