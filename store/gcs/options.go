package gcs

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/wharfdata/wharf/store/driver"
)

func init() {
	driver.Register(driver.Backend{Scheme: "gs", Parse: driver.BucketURL("gs://bucket/key"),
		NoUploads: "a resumable upload session belongs to the client that started it; an abandoned one expires after a week"}, New)
}

// The environment Google's tools read, which wharf reads the same way. (The auth library
// itself reads GOOGLE_APPLICATION_CREDENTIALS for application default credentials.)
const (
	// EmulatorHostEnv names a Cloud Storage emulator: "host:port" (plain HTTP) or a URL.
	EmulatorHostEnv = "STORAGE_EMULATOR_HOST"
	// ProjectEnv names the project a new bucket goes in.
	ProjectEnv = "GOOGLE_CLOUD_PROJECT"
)

// Options are the Cloud Storage store's options.
type Options struct {
	// Endpoint is an emulator or private endpoint, https:// (http:// on loopback only).
	// Default: STORAGE_EMULATOR_HOST (then requests go without credentials, as Google's SDKs
	// do), else Cloud Storage itself.
	Endpoint string `yaml:"endpoint"`
	// Region is the location wharf mb creates a bucket in (default: GCS's, the US
	// multi-region).
	Region string `yaml:"region"`
	// ServiceAccountFile is a reference (env://NAME or file:///path) to a service-account
	// JSON key; without it, application default credentials. With Anonymous, none.
	ServiceAccountFile string `yaml:"service_account_file" secret:"ref"`
	Anonymous          bool   `yaml:"anonymous"`
	// AllowHTTP and AllowAnonymous waive endpoint rules on purpose (driver.Waivers).
	AllowHTTP      bool `yaml:"allow_http"`
	AllowAnonymous bool `yaml:"allow_anonymous"`
	// PartSize is the resumable upload's chunk (default 16 MiB, rounded up to 256 KiB).
	PartSize int64 `yaml:"part_size" unit:"bytes"`

	emulatorEnv string // STORAGE_EMULATOR_HOST as the environment gave it
	project     string // GOOGLE_CLOUD_PROJECT
}

func (o *Options) waivers() driver.Waivers {
	return driver.Waivers{AllowHTTP: o.AllowHTTP, AllowAnonymous: o.AllowAnonymous, Anonymous: o.Anonymous}
}

// FromEnv reads STORAGE_EMULATOR_HOST and GOOGLE_CLOUD_PROJECT.
func (o *Options) FromEnv(getenv func(string) string) {
	o.emulatorEnv = getenv(EmulatorHostEnv)
	o.project = getenv(ProjectEnv)
}

// Check applies the endpoint rules (to an emulator named by STORAGE_EMULATOR_HOST too) and
// refuses literal or conflicting credentials.
func (o *Options) Check(loc driver.Location, c *driver.Common) error {
	if _, err := o.target(c); err != nil {
		return err
	}
	if err := driver.CheckRefs([2]string{serviceAccountField, o.ServiceAccountFile}); err != nil {
		return err
	}
	if o.Anonymous && o.ServiceAccountFile != "" {
		return &driver.Error{Op: "config", Key: "anonymous", Kind: driver.ErrCredentialConflict,
			Err: fmt.Errorf("anonymous cannot be combined with credentials (service_account_file given): give one")}
	}
	if o.PartSize < 0 {
		return &driver.Error{Op: "config", Key: "part_size", Kind: driver.ErrConfig, Err: fmt.Errorf("part_size must not be negative")}
	}
	return nil
}

// target resolves the endpoint: the option's, else STORAGE_EMULATOR_HOST (as Google's SDKs
// read it: "host:port" means http://host:port), else Cloud Storage. An endpoint from the
// environment passes the same checks as a configured one (plaintext on loopback only, the
// allowlist), so the environment cannot send data where the config could not.
func (o *Options) target(c *driver.Common) (target, error) {
	if o.Endpoint != "" {
		if err := c.CheckEndpointWaived("endpoint", o.Endpoint, o.waivers()); err != nil {
			return target{}, err
		}
		return target{endpoint: strings.TrimRight(o.Endpoint, "/"), emulator: true}, nil
	}
	host := o.emulatorEnv
	if host == "" {
		return target{endpoint: defaultEndpoint, xmlReads: true}, nil
	}
	ep := host
	if !strings.Contains(host, "://") {
		ep = "http://" + host
	}
	u, err := url.Parse(ep)
	if err != nil || u.Host == "" {
		return target{}, &driver.Error{Op: "endpoint", Key: EmulatorHostEnv, Kind: driver.ErrEndpointUnsupported,
			Err: fmt.Errorf("%s=%q is not host:port or an http(s) URL", EmulatorHostEnv, driver.RedactURL(host))}
	}
	if err := c.CheckEndpointWaived(EmulatorHostEnv, ep, o.waivers()); err != nil {
		return target{}, err
	}
	return target{endpoint: u.Scheme + "://" + u.Host, emulator: true, fromEnv: true}, nil
}
