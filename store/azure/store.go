package azure

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"

	"github.com/wharfdata/wharf/internal/secret"
	"github.com/wharfdata/wharf/store/driver"
)

// Container is an Azure Blob Storage container (or Azurite's). It makes exactly one HTTP
// request per SDK call: retries are the store's RetryPolicy, applied by the portable store (store.Store)
// and, inside a staged upload, by Container itself to each block.
type Container struct {
	service     *service.Client
	client      *container.Client
	account     string
	container   string
	loc         driver.Location
	endpoint    string // the account's blob service URL, without credentials
	creds       creds
	secrets     []secret.Value // every form of the credentials, scrubbed from error texts
	policy      *driver.RetryPolicy
	partSize    int64
	concurrency int
	log         *slog.Logger
}

// New opens the container of loc (an az:// location) with o, which has passed Check. It reads
// credential references and the conventional environment (through c) but makes no request.
func New(_ context.Context, loc driver.Location, o *Options, c *driver.Common) (*Container, error) {
	loc = loc.Root()
	if !validAccount(loc.Account) {
		return nil, &driver.Error{Op: "open", Key: loc.String(), Kind: driver.ErrConfig,
			Err: fmt.Errorf("account %q: a storage account name is 3 to 24 lowercase letters and digits", loc.Account)}
	}
	if loc.Bucket != "" && !validContainer(loc.Bucket) { // none: for ListBuckets only
		return nil, &driver.Error{Op: "open", Key: loc.String(), Kind: driver.ErrConfig,
			Err: fmt.Errorf("container %q: a container name is 3 to 63 lowercase letters, digits and single dashes, starting and ending with a letter or digit", loc.Bucket)}
	}
	cr, err := resolveCreds(loc, o, c)
	if err != nil {
		return nil, err
	}
	svc, err := serviceURL(loc, o, c, cr)
	if err != nil {
		return nil, err
	}
	sc, err := newServiceClient(svc, loc.Account, cr, c.RetryPolicy())
	if err != nil {
		return nil, &driver.Error{Op: "open", Key: loc.String(), Kind: driver.ErrConfig,
			Err: fmt.Errorf("%s: %w", cr.source, err)}
	}
	return &Container{
		service:     sc,
		client:      sc.NewContainerClient(loc.Bucket),
		account:     loc.Account,
		container:   loc.Bucket,
		loc:         loc,
		endpoint:    svc,
		creds:       cr,
		secrets:     secretForms(cr),
		policy:      c.RetryPolicy(),
		partSize:    o.PartSize,
		concurrency: o.Concurrency,
		log:         c.Log(),
	}, nil
}

// Describe names the container and the service endpoint, never a credential.
func (c *Container) Describe() driver.Description {
	return driver.Description{Scheme: "az", Location: c.loc.String(), Endpoint: c.endpoint}
}

// Close releases nothing: the HTTP client's idle connections close on their own.
func (c *Container) Close() error { return nil }

// MakeBucket creates the container. One that already exists in the account is success: a
// container name is the account's own.
func (c *Container) MakeBucket(ctx context.Context) error {
	_, err := c.client.Create(ctx, nil)
	var re *azcore.ResponseError
	if errors.As(err, &re) && re.ErrorCode == "ContainerAlreadyExists" {
		return nil
	}
	return c.mapError(ctx, call{op: "make-bucket", key: c.container}, err)
}

// PresignGet returns the blob's URL with a SAS granting read until expiry from now, signed
// with the account key: a store opened with a SAS token or anonymously has no key to sign
// with (ErrUnsupported).
func (c *Container) PresignGet(ctx context.Context, key string, expiry time.Duration) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if c.creds.mode != modeSharedKey {
		return "", &driver.Error{Op: "presign", Key: key, Kind: driver.ErrUnsupported,
			Err: errors.New("a SAS is signed with the account key: this store was opened without one (a SAS token, or anonymous)")}
	}
	if expiry <= 0 {
		return "", &driver.Error{Op: "presign", Key: key, Kind: driver.ErrConfig, Err: fmt.Errorf("expiry %s: want a positive duration", expiry)}
	}
	u, err := c.blob(key).GetSASURL(sas.BlobPermissions{Read: true}, time.Now().Add(expiry), nil)
	if err != nil {
		return "", c.mapError(ctx, call{op: "presign", key: key}, err)
	}
	return u, nil
}

// RemoveBucket removes the container when it holds no blob. Azure deletes a container with
// everything in it, so the emptiness is checked first by a listing of one blob: a blob
// written between that listing and the delete goes with the container.
func (c *Container) RemoveBucket(ctx context.Context) error {
	page, err := c.List(ctx, &driver.ListOptions{MaxKeys: 1})
	switch {
	case err != nil:
		return err
	case len(page.Objects) > 0:
		return &driver.Error{Op: "remove-bucket", Key: c.container, Kind: driver.ErrBucketNotEmpty,
			Err: fmt.Errorf("it holds %s and more", page.Objects[0].Key)}
	}
	_, err = c.client.Delete(ctx, nil)
	return c.mapError(ctx, call{op: "remove-bucket", key: c.container}, err)
}

// DeleteContainer deletes the container and everything in it. wharf's commands never call it;
// tests clean up with it.
func (c *Container) DeleteContainer(ctx context.Context) error {
	_, err := c.client.Delete(ctx, nil)
	return c.mapError(ctx, call{op: "delete", key: c.container}, err)
}

func (c *Container) blob(key string) *blob.Client { return c.client.NewBlobClient(key) }

func (c *Container) blockBlob(key string) *blockblob.Client { return c.client.NewBlockBlobClient(key) }
