package azure

import (
	"errors"
	"fmt"

	"github.com/wharfdata/wharf/store/driver"
)

func init() {
	driver.Register(driver.Backend{Scheme: "az", Parse: driver.AccountURL("az://account/container/key"),
		Noun: "container"}, New)
}

// Options are the Azure Blob store's options. Without account_key, sas_token or anonymous,
// the credentials come from the environment of Azure's own tools, in this order:
// AZURE_STORAGE_CONNECTION_STRING, AZURE_STORAGE_KEY, AZURE_STORAGE_SAS_TOKEN (with
// AZURE_STORAGE_ACCOUNT naming their account).
type Options struct {
	// Endpoint is the blob service's https:// URL (http:// on loopback only): Azurite, or a
	// private endpoint. Default: a connection string's BlobEndpoint, else
	// https://{account}.blob.core.windows.net.
	Endpoint  string `yaml:"endpoint"`
	Anonymous bool   `yaml:"anonymous"` // a public container: send no credentials
	// AllowHTTP and AllowAnonymous waive endpoint rules on purpose (driver.Waivers).
	AllowHTTP      bool `yaml:"allow_http"`
	AllowAnonymous bool `yaml:"allow_anonymous"`
	// References (env://NAME or file:///path), never literals; give one of the two.
	AccountKey string `yaml:"account_key" secret:"ref"`
	SASToken   string `yaml:"sas_token" secret:"ref"`
	// PartSize and Concurrency bound staged-block uploads (defaults 16 MiB and 4).
	PartSize    int64 `yaml:"part_size" unit:"bytes"`
	Concurrency int   `yaml:"concurrency"`
}

func (o *Options) waivers() driver.Waivers {
	return driver.Waivers{AllowHTTP: o.AllowHTTP, AllowAnonymous: o.AllowAnonymous, Anonymous: o.Anonymous}
}

// Check applies the endpoint rules and refuses literal or conflicting credentials.
func (o *Options) Check(loc driver.Location, c *driver.Common) error {
	if err := c.CheckEndpointWaived("endpoint", o.Endpoint, o.waivers()); err != nil {
		return err
	}
	if err := driver.CheckRefs([2]string{"account_key", o.AccountKey}, [2]string{"sas_token", o.SASToken}); err != nil {
		return err
	}
	switch {
	case o.Anonymous && (o.AccountKey != "" || o.SASToken != ""):
		given := "account_key"
		if o.SASToken != "" {
			given = "sas_token"
		}
		return &driver.Error{Op: "config", Key: "anonymous", Kind: driver.ErrCredentialConflict,
			Err: fmt.Errorf("anonymous cannot be combined with credentials (%s given): give one", given)}
	case o.AccountKey != "" && o.SASToken != "":
		return &driver.Error{Op: "config", Key: "account_key", Kind: driver.ErrCredentialConflict,
			Err: errors.New("account_key and sas_token are mutually exclusive: give one of account_key or sas_token")}
	case o.PartSize < 0 || o.Concurrency < 0:
		return &driver.Error{Op: "config", Key: "part_size", Kind: driver.ErrConfig, Err: errors.New("part_size and concurrency must not be negative")}
	}
	return nil
}
