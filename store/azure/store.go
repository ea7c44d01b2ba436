package azure

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/wharfdata/wharf/internal/secret"
	"github.com/wharfdata/wharf/store"
)

func init() {
	store.Register("az", Open)
}

// Container is an Azure Blob Storage container (or Azurite's). It makes exactly one HTTP
// request per SDK call: retries are the store's RetryPolicy, applied by store.Open's wrapper
// and, inside a staged upload, by Container itself to each block.
type Container struct {
	client      *container.Client
	account     string
	container   string
	loc         store.Location
	endpoint    string // the account's blob service URL, without credentials
	creds       creds
	secrets     []secret.Value // every form of the credentials, scrubbed from error texts
	policy      *store.RetryPolicy
	partSize    int64
	concurrency int
	log         *slog.Logger
}

var (
	_ store.Store        = (*Container)(nil)
	_ store.Copier       = (*Container)(nil)
	_ store.BucketMaker  = (*Container)(nil)
	_ store.BatchDeleter = (*Container)(nil)
	_ store.Describer    = (*Container)(nil)
)

// Open opens the container of loc (an az:// location) with cfg, which has passed
// store.Config.Check. It reads credential references and the conventional environment but
// makes no request.
func Open(ctx context.Context, loc store.Location, cfg *store.Config) (store.Store, error) {
	return New(ctx, loc, cfg)
}

// New is Open returning the concrete *Container.
func New(_ context.Context, loc store.Location, cfg *store.Config) (*Container, error) {
	return newContainer(loc, cfg, os.Getenv)
}

func newContainer(loc store.Location, cfg *store.Config, getenv func(string) string) (*Container, error) {
	loc = loc.Root()
	if !validAccount(loc.Account) {
		return nil, &store.Error{Op: "open", Key: loc.String(), Kind: store.ErrConfig,
			Err: fmt.Errorf("account %q: a storage account name is 3 to 24 lowercase letters and digits", loc.Account)}
	}
	if !validContainer(loc.Bucket) {
		return nil, &store.Error{Op: "open", Key: loc.String(), Kind: store.ErrConfig,
			Err: fmt.Errorf("container %q: a container name is 3 to 63 lowercase letters, digits and single dashes, starting and ending with a letter or digit", loc.Bucket)}
	}
	cr, err := resolveCreds(loc, cfg, getenv)
	if err != nil {
		return nil, err
	}
	svc, err := serviceURL(loc, cfg, cr)
	if err != nil {
		return nil, err
	}
	client, err := newContainerClient(svc+"/"+loc.Bucket, loc.Account, cr, cfg.RetryPolicy())
	if err != nil {
		return nil, &store.Error{Op: "open", Key: loc.String(), Kind: store.ErrConfig,
			Err: fmt.Errorf("%s: %w", cr.source, err)}
	}
	return &Container{
		client:      client,
		account:     loc.Account,
		container:   loc.Bucket,
		loc:         loc,
		endpoint:    svc,
		creds:       cr,
		secrets:     secretForms(cr),
		policy:      cfg.RetryPolicy(),
		partSize:    cfg.PartSize,
		concurrency: cfg.Concurrency,
		log:         cfg.Log(),
	}, nil
}

// Describe names the container and the service endpoint, never a credential.
func (c *Container) Describe() store.Description {
	return store.Description{Scheme: "az", Location: c.loc.String(), Endpoint: c.endpoint}
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

// DeleteContainer deletes the container and everything in it. wharf's commands never call it;
// tests clean up with it.
func (c *Container) DeleteContainer(ctx context.Context) error {
	_, err := c.client.Delete(ctx, nil)
	return c.mapError(ctx, call{op: "delete", key: c.container}, err)
}

func (c *Container) blob(key string) *blob.Client { return c.client.NewBlobClient(key) }

func (c *Container) blockBlob(key string) *blockblob.Client { return c.client.NewBlockBlobClient(key) }
