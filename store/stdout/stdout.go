package stdout

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"

	"github.com/wharfdata/wharf/store/driver"
)

func init() {
	driver.Register(driver.Backend{
		Scheme:    "stdout",
		Words:     []string{"-", "stdout:"},
		WriteOnly: true,
		Parse: func(rest string) (driver.Location, error) {
			if rest != "" && rest != "-" && rest != "stdout:" {
				return driver.Location{}, &driver.Error{Op: "parse-url", Key: "stdout://" + rest, Kind: driver.ErrConfig,
					Err: errors.New("standard output takes no key: write - or stdout://")}
			}
			return driver.Location{Scheme: "stdout"}, nil
		},
	}, func(context.Context, driver.Location, *Options, *driver.Common) (*Store, error) {
		return New(os.Stdout), nil
	})
}

// Options are standard output's options: it has none.
type Options struct{}

// Check accepts the empty options.
func (*Options) Check(driver.Location, *driver.Common) error { return nil }

// Store writes every Put's body to an io.Writer, one body at a time.
type Store struct {
	mu sync.Mutex
	w  io.Writer
}

var (
	_ driver.Bucket = (*Store)(nil)
)

// New returns a store that writes to w.
func New(w io.Writer) *Store { return &Store{w: w} }

func unsupported(op, key string) error {
	return &driver.Error{Op: op, Key: key, Kind: driver.ErrUnsupported,
		Err: errors.New("stdout is a write-only stream")}
}

// Get is not supported.
func (s *Store) Get(_ context.Context, key string, _ *driver.GetOptions) (*driver.Object, error) {
	return nil, unsupported("get", key)
}

// Head is not supported.
func (s *Store) Head(_ context.Context, key string) (driver.ObjectInfo, error) {
	return driver.ObjectInfo{}, unsupported("head", key)
}

// Delete is not supported.
func (s *Store) Delete(_ context.Context, key string, _ *driver.DeleteOptions) error {
	return unsupported("delete", key)
}

// List is not supported.
func (s *Store) List(_ context.Context, opts *driver.ListOptions) (driver.Page, error) {
	return driver.Page{}, unsupported("list", opts.Prefix)
}

// Put copies body to the writer. Conditional puts are refused with driver.ErrUnsupported.
func (s *Store) Put(ctx context.Context, key string, body io.Reader, opts *driver.PutOptions) (driver.ObjectInfo, error) {
	if err := ctx.Err(); err != nil {
		return driver.ObjectInfo{}, err
	}
	if opts.Conditional() {
		return driver.ObjectInfo{}, &driver.Error{Op: "put", Key: key, Kind: driver.ErrUnsupported,
			Err: errors.New("stdout cannot honour a conditional put")}
	}
	info := driver.ObjectInfo{Key: key, ContentType: opts.ContentType}
	if body == nil {
		return info, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := io.Copy(s.w, driver.ContextReader(ctx, body))
	info.Size = n
	if err != nil {
		return driver.ObjectInfo{}, putError(ctx, key, err)
	}
	return info, nil
}

func putError(ctx context.Context, key string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var se *driver.Error
	if driver.IsContext(err) || errors.As(err, &se) {
		return err
	}
	return &driver.Error{Op: "put", Key: key, Kind: driver.ErrUnavailable, Err: err}
}

// Close does nothing: the writer belongs to the caller.
func (s *Store) Close() error { return nil }

// Describe names the driver.
func (s *Store) Describe() driver.Description {
	return driver.Description{Scheme: "stdout", Location: "stdout://"}
}
