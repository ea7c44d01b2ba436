package s3

import (
	"fmt"
	"strings"

	"github.com/wharfdata/wharf/store/driver"
)

func init() {
	driver.Register(driver.Backend{Scheme: "s3", Parse: driver.BucketURL("s3://bucket/key")}, New)
	driver.Register(driver.Backend{Scheme: "r2", Parse: driver.AccountURL("r2://account-id/bucket/key")}, New)
}

// The environment S3's own tools read, which wharf reads the same way (through the getenv of
// the program that opens the store).
const (
	EnvEndpointS3    = "AWS_ENDPOINT_URL_S3"
	EnvEndpoint      = "AWS_ENDPOINT_URL"
	EnvRegion        = "AWS_REGION"
	EnvDefaultRegion = "AWS_DEFAULT_REGION"
	EnvCABundle      = "AWS_CA_BUNDLE"
)

// Options are the S3 (and R2) store's options, as the config file's store sections and the
// flags give them.
type Options struct {
	// Endpoint is https://host[:port] (http:// on loopback only): an S3-compatible server,
	// addressed path-style. Default: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the AWS profile's
	// endpoint_url, else AWS itself (or the R2 account's endpoint).
	Endpoint string `yaml:"endpoint"`
	// Region defaults to AWS_REGION, AWS_DEFAULT_REGION, the profile's, else us-east-1 (auto
	// for R2).
	Region string `yaml:"region"`
	// Profile is the AWS configuration profile whose region, endpoint_url and credentials are
	// read (as aws-cli's --profile); default AWS_PROFILE, else "default".
	Profile string `yaml:"profile"`
	// Credentials is "" (the keys below, else the AWS SDK's default chain) or "role"
	// (workload-role credentials only). With Anonymous, none are sent.
	Credentials string `yaml:"credentials"`
	Anonymous   bool   `yaml:"anonymous"`
	// AllowHTTP and AllowAnonymous waive endpoint rules on purpose (driver.Waivers).
	AllowHTTP      bool `yaml:"allow_http"`
	AllowAnonymous bool `yaml:"allow_anonymous"`
	// References (env://NAME, file:///path) to keys, never literals.
	AccessKeyID     string `yaml:"access_key_id" secret:"ref"`
	SecretAccessKey string `yaml:"secret_access_key" secret:"ref"`
	SessionToken    string `yaml:"session_token" secret:"ref"`
	// PartSize and Concurrency bound multipart uploads (defaults 16 MiB and 4).
	PartSize    int64 `yaml:"part_size" unit:"bytes"`
	Concurrency int   `yaml:"concurrency"`

	// endpointFrom names the variable Endpoint came from, for messages.
	envEndpoint, endpointFrom string
}

func (o *Options) waivers() driver.Waivers {
	return driver.Waivers{AllowHTTP: o.AllowHTTP, AllowAnonymous: o.AllowAnonymous, Anonymous: o.Anonymous}
}

// FromEnv takes the endpoint and region from the AWS tools' variables.
func (o *Options) FromEnv(getenv func(string) string) {
	for _, name := range []string{EnvEndpointS3, EnvEndpoint} {
		if v := getenv(name); v != "" {
			o.Endpoint, o.envEndpoint, o.endpointFrom = v, v, name
			break
		}
	}
	for _, name := range []string{EnvRegion, EnvDefaultRegion} {
		if v := getenv(name); v != "" {
			o.Region = v
			break
		}
	}
}

// Check applies the endpoint rules, refuses literal credentials, and checks that the
// credential options combine.
func (o *Options) Check(loc driver.Location, c *driver.Common) error {
	source := "endpoint"
	if o.Endpoint != "" && o.Endpoint == o.envEndpoint {
		source = o.endpointFrom
	}
	if err := c.CheckEndpointWaived(source, o.Endpoint, o.waivers()); err != nil {
		return err
	}
	if err := driver.CheckRefs([2]string{"access_key_id", o.AccessKeyID},
		[2]string{"secret_access_key", o.SecretAccessKey}, [2]string{"session_token", o.SessionToken}); err != nil {
		return err
	}
	keys := o.AccessKeyID != "" || o.SecretAccessKey != "" || o.SessionToken != ""
	bad := func(kind error, key, format string, a ...any) error {
		e := &driver.Error{Op: "config", Key: key, Kind: driver.ErrConfig, Err: fmt.Errorf(format, a...)}
		switch kind {
		case driver.ErrCredentialConflict:
			e.Kind = driver.ErrCredentialConflict
		case driver.ErrCredentialUnbound:
			e.Kind = driver.ErrCredentialUnbound
		}
		return e
	}
	switch {
	case o.Credentials != "" && o.Credentials != "role":
		return bad(driver.ErrConfig, "credentials", "credentials: %q is not a mode (want role, or leave it out)", o.Credentials)
	case o.Credentials == "role" && (keys || o.Anonymous):
		return bad(driver.ErrCredentialConflict, "credentials", "credentials: role beside access keys or anonymous for %s: give one", loc)
	case o.Credentials == "role" && loc.Scheme == "r2":
		return bad(driver.ErrCredentialConflict, "credentials", "credentials: role is not available for R2 (%s)", loc)
	case o.Anonymous && keys:
		return bad(driver.ErrCredentialConflict, "anonymous", "anonymous cannot be combined with credentials (%s given): give one", strings.Join(o.given(), ", "))
	case (o.AccessKeyID == "") != (o.SecretAccessKey == ""):
		return bad(driver.ErrCredentialUnbound, "access_key_id", "access_key_id and secret_access_key must be given together")
	case o.PartSize < 0 || o.Concurrency < 0:
		return bad(driver.ErrConfig, "part_size", "part_size and concurrency must not be negative")
	}
	return nil
}

func (o *Options) given() []string {
	var out []string
	for _, f := range [][2]string{{"access_key_id", o.AccessKeyID}, {"secret_access_key", o.SecretAccessKey}, {"session_token", o.SessionToken}} {
		if f[1] != "" {
			out = append(out, f[0])
		}
	}
	return out
}
