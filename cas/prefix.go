package cas

import "context"

// Prefixed is a Store that keeps its records below prefix in another: a namespace (one job's
// records in a bucket shared by many). prefix ends in '/'.
type Prefixed struct {
	s      Store
	prefix string
}

var _ Store = Prefixed{}

// WithPrefix returns the Store of the records below prefix in s.
func WithPrefix(s Store, prefix string) Prefixed { return Prefixed{s: s, prefix: prefix} }

// Get implements Store.
func (p Prefixed) Get(ctx context.Context, key string) ([]byte, string, error) {
	if err := CheckKey(key); err != nil {
		return nil, "", err
	}
	return p.s.Get(ctx, p.prefix+key)
}

// Create implements Store.
func (p Prefixed) Create(ctx context.Context, key string, value []byte) (string, error) {
	if err := CheckKey(key); err != nil {
		return "", err
	}
	return p.s.Create(ctx, p.prefix+key, value)
}

// Update implements Store.
func (p Prefixed) Update(ctx context.Context, key string, value []byte, rev string) (string, error) {
	if err := CheckKey(key); err != nil {
		return "", err
	}
	return p.s.Update(ctx, p.prefix+key, value, rev)
}

// Describe implements Store.
func (p Prefixed) Describe() string { return p.s.Describe() + " below " + p.prefix }
