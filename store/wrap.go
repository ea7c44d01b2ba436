package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
)

// Unwrapper is implemented by stores that wrap another.
type Unwrapper interface{ Unwrap() Store }

// As finds the first store in s's wrapping chain that is a T (a Copier, a BucketMaker…).
func As[T any](s Store) (T, bool) {
	for s != nil {
		if t, ok := s.(T); ok {
			return t, true
		}
		u, ok := s.(Unwrapper)
		if !ok {
			break
		}
		s = u.Unwrap()
	}
	var zero T
	return zero, false
}

// Describe returns what s says it is, looking through wrappers.
func Describe(s Store) Description {
	for s != nil {
		if d, ok := s.(Describer); ok {
			return d.Describe()
		}
		u, ok := s.(Unwrapper)
		if !ok {
			break
		}
		s = u.Unwrap()
	}
	return Description{Scheme: "unknown"}
}

// Validate wraps s so that every key, prefix, metadata map and option combination is checked
// before s sees it (ErrKeyInvalid, ErrConfig).
func Validate(s Store) Store { return &validating{s: s} }

type validating struct{ s Store }

func (v *validating) Unwrap() Store         { return v.s }
func (v *validating) Close() error          { return v.s.Close() }
func (v *validating) Describe() Description { return Describe(v.s) }

func (v *validating) Get(ctx context.Context, key string, opts *GetOptions) (*Object, error) {
	if err := ValidateKey("get", key); err != nil {
		return nil, err
	}
	if opts != nil && (opts.Offset < 0 || opts.Length < 0) {
		return nil, &Error{Op: "get", Key: key, Kind: ErrConfig, Err: fmt.Errorf("negative range %d+%d", opts.Offset, opts.Length)}
	}
	return v.s.Get(ctx, key, opts)
}

func (v *validating) Head(ctx context.Context, key string) (ObjectInfo, error) {
	if err := ValidateKey("head", key); err != nil {
		return ObjectInfo{}, err
	}
	return v.s.Head(ctx, key)
}

func (v *validating) Put(ctx context.Context, key string, body io.Reader, opts *PutOptions) (ObjectInfo, error) {
	if err := ValidateKey("put", key); err != nil {
		return ObjectInfo{}, err
	}
	if opts != nil {
		if opts.IfNoneMatch && opts.IfMatch != "" {
			return ObjectInfo{}, &Error{Op: "put", Key: key, Kind: ErrConfig, Err: fmt.Errorf("IfNoneMatch and IfMatch together")}
		}
		if err := ValidateMetadata("put", key, opts.Metadata); err != nil {
			return ObjectInfo{}, err
		}
		if opts.Conditional() && opts.Metadata[MetaPutID] == "" {
			o := *opts
			o.Metadata = maps.Clone(opts.Metadata)
			if o.Metadata == nil {
				o.Metadata = map[string]string{}
			}
			o.Metadata[MetaPutID] = NewPutID()
			opts = &o
		}
	}
	info, err := v.s.Put(ctx, key, body, opts)
	var e *Error
	if err != nil && opts.Conditional() && errors.As(err, &e) {
		e.PutID = opts.Metadata[MetaPutID]
	}
	return info, err
}

func (v *validating) Delete(ctx context.Context, key string, opts *DeleteOptions) error {
	if err := ValidateKey("delete", key); err != nil {
		return err
	}
	return v.s.Delete(ctx, key, opts)
}

func (v *validating) List(ctx context.Context, opts *ListOptions) (Page, error) {
	if opts == nil {
		opts = &ListOptions{}
	}
	if err := ValidatePrefix("list", opts.Prefix); err != nil {
		return Page{}, err
	}
	if opts.Delimiter != "" && opts.Delimiter != "/" {
		return Page{}, &Error{Op: "list", Key: opts.Prefix, Kind: ErrUnsupported, Err: fmt.Errorf("delimiter %q (only \"/\")", opts.Delimiter)}
	}
	return v.s.List(ctx, opts)
}

func (v *validating) Copy(ctx context.Context, src, dst string, opts *PutOptions) (ObjectInfo, error) {
	if err := ValidateKey("copy", src); err != nil {
		return ObjectInfo{}, err
	}
	if err := ValidateKey("copy", dst); err != nil {
		return ObjectInfo{}, err
	}
	return Copy(ctx, v.s, src, dst, opts)
}

func (v *validating) MakeBucket(ctx context.Context) error { return MakeBucket(ctx, v.s) }

func (v *validating) DeleteMany(ctx context.Context, keys []string) error {
	for _, k := range keys {
		if err := ValidateKey("delete", k); err != nil {
			return err
		}
	}
	return DeleteMany(ctx, v.s, keys)
}

// WithPrefix serves the keys of s below prefix (which ends in '/'): key k of the result is
// prefix+k in s, and listings hand keys back without the prefix. Errors name the full key,
// which is what a user looks for in the bucket.
func WithPrefix(s Store, prefix string) Store { return &prefixed{s: s, p: prefix} }

type prefixed struct {
	s Store
	p string
}

func (p *prefixed) Unwrap() Store { return p.s }
func (p *prefixed) Close() error  { return p.s.Close() }
func (p *prefixed) Describe() Description {
	d := Describe(p.s)
	d.Location = strings.TrimSuffix(d.Location, "/") + "/" + p.p
	return d
}

func (p *prefixed) Get(ctx context.Context, key string, opts *GetOptions) (*Object, error) {
	o, err := p.s.Get(ctx, p.p+key, opts)
	if err != nil {
		return nil, err
	}
	o.Info.Key = key
	return o, nil
}

func (p *prefixed) Head(ctx context.Context, key string) (ObjectInfo, error) {
	info, err := p.s.Head(ctx, p.p+key)
	info.Key = key
	return info, err
}

func (p *prefixed) Put(ctx context.Context, key string, body io.Reader, opts *PutOptions) (ObjectInfo, error) {
	info, err := p.s.Put(ctx, p.p+key, body, opts)
	info.Key = key
	return info, err
}

func (p *prefixed) Delete(ctx context.Context, key string, opts *DeleteOptions) error {
	return p.s.Delete(ctx, p.p+key, opts)
}

func (p *prefixed) List(ctx context.Context, opts *ListOptions) (Page, error) {
	var o ListOptions
	if opts != nil {
		o = *opts
	}
	o.Prefix = p.p + o.Prefix
	page, err := p.s.List(ctx, &o)
	if err != nil {
		return page, err
	}
	for i := range page.Objects {
		page.Objects[i].Key = strings.TrimPrefix(page.Objects[i].Key, p.p)
	}
	for i := range page.Prefixes {
		page.Prefixes[i] = strings.TrimPrefix(page.Prefixes[i], p.p)
	}
	return page, nil
}

func (p *prefixed) Copy(ctx context.Context, src, dst string, opts *PutOptions) (ObjectInfo, error) {
	info, err := Copy(ctx, p.s, p.p+src, p.p+dst, opts)
	info.Key = dst
	return info, err
}

func (p *prefixed) MakeBucket(ctx context.Context) error { return MakeBucket(ctx, p.s) }

// DeleteMany deletes keys below the prefix.
func (p *prefixed) DeleteMany(ctx context.Context, keys []string) error {
	full := make([]string, len(keys))
	for i, k := range keys {
		full[i] = p.p + k
	}
	return DeleteMany(ctx, p.s, full)
}

// Copy copies src to dst in s: server-side where s has a Copier, else streamed through Get
// and Put (never staged on disk).
func Copy(ctx context.Context, s Store, src, dst string, opts *PutOptions) (ObjectInfo, error) {
	if c, ok := s.(Copier); ok {
		return c.Copy(ctx, src, dst, opts)
	}
	return copyStream(ctx, s, src, dst, opts)
}

func copyStream(ctx context.Context, s Store, src, dst string, opts *PutOptions) (ObjectInfo, error) {
	obj, err := s.Get(ctx, src, nil)
	if err != nil {
		return ObjectInfo{}, err
	}
	defer obj.Close()
	o := PutOptions{}
	if opts != nil {
		o = *opts
	}
	o.Size = obj.Info.Size
	if o.Metadata == nil {
		o.Metadata = obj.Info.Metadata
	}
	if o.ContentType == "" {
		o.ContentType = obj.Info.ContentType
	}
	return s.Put(ctx, dst, obj, &o)
}

// DeleteMany removes keys from s: in batches where s (or the store it wraps) is a
// BatchDeleter, else one Delete at a time. A missing key is not an error.
func DeleteMany(ctx context.Context, s Store, keys []string) error {
	if b, ok := s.(BatchDeleter); ok {
		return b.DeleteMany(ctx, keys)
	}
	for _, k := range keys {
		if err := s.Delete(ctx, k, nil); err != nil {
			return err
		}
	}
	return nil
}

// MakeBucket creates the bucket or container s points at, where the backend can.
func MakeBucket(ctx context.Context, s Store) error {
	if m, ok := s.(BucketMaker); ok {
		return m.MakeBucket(ctx)
	}
	return &Error{Op: "make-bucket", Key: Describe(s).Location, Kind: ErrUnsupported}
}
