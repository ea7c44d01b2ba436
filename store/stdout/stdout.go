package stdout

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"

	"github.com/wharfdata/wharf/store"
)

func init() { store.Register("stdout", open) }

func open(context.Context, store.Location, *store.Config) (store.Store, error) {
	return New(os.Stdout), nil
}

// Store writes every Put's body to an io.Writer, one body at a time.
type Store struct {
	mu sync.Mutex
	w  io.Writer
}

var (
	_ store.Store     = (*Store)(nil)
	_ store.Describer = (*Store)(nil)
)

// New returns a store that writes to w.
func New(w io.Writer) *Store { return &Store{w: w} }

func unsupported(op, key string) error {
	return &store.Error{Op: op, Key: key, Kind: store.ErrUnsupported,
		Err: errors.New("stdout is a write-only stream")}
}

// Get is not supported.
func (s *Store) Get(_ context.Context, key string, _ *store.GetOptions) (*store.Object, error) {
	return nil, unsupported("get", key)
}

// Head is not supported.
func (s *Store) Head(_ context.Context, key string) (store.ObjectInfo, error) {
	return store.ObjectInfo{}, unsupported("head", key)
}

// Delete is not supported.
func (s *Store) Delete(_ context.Context, key string, _ *store.DeleteOptions) error {
	return unsupported("delete", key)
}

// List is not supported.
func (s *Store) List(_ context.Context, opts *store.ListOptions) (store.Page, error) {
	var prefix string
	if opts != nil {
		prefix = opts.Prefix
	}
	return store.Page{}, unsupported("list", prefix)
}

// Put copies body to the writer. Conditional puts are refused with store.ErrUnsupported.
func (s *Store) Put(ctx context.Context, key string, body io.Reader, opts *store.PutOptions) (store.ObjectInfo, error) {
	if err := ctx.Err(); err != nil {
		return store.ObjectInfo{}, err
	}
	if opts.Conditional() {
		return store.ObjectInfo{}, &store.Error{Op: "put", Key: key, Kind: store.ErrUnsupported,
			Err: errors.New("stdout cannot honour a conditional put")}
	}
	info := store.ObjectInfo{Key: key}
	if opts != nil {
		info.ContentType = opts.ContentType
	}
	if body == nil {
		return info, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := io.Copy(s.w, &ctxReader{ctx: ctx, r: body})
	info.Size = n
	if err != nil {
		return store.ObjectInfo{}, putError(ctx, key, err)
	}
	return info, nil
}

func putError(ctx context.Context, key string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var se *store.Error
	if store.IsContext(err) || errors.As(err, &se) {
		return err
	}
	return &store.Error{Op: "put", Key: key, Kind: store.ErrUnavailable, Err: err}
}

// ctxReader stops a copy when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Close does nothing: the writer belongs to the caller.
func (s *Store) Close() error { return nil }

// Describe names the store.
func (s *Store) Describe() store.Description {
	return store.Description{Scheme: "stdout", Location: "stdout://"}
}
