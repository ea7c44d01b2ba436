package store

import (
	"context"
	"iter"
)

// Walk yields every object under prefix in sorted order, following every page. It stops at
// the first error, which it yields with a zero ObjectInfo.
func Walk(ctx context.Context, s Store, prefix string) iter.Seq2[ObjectInfo, error] {
	return func(yield func(ObjectInfo, error) bool) {
		opts := ListOptions{Prefix: prefix}
		for {
			page, err := s.List(ctx, &opts)
			if err != nil {
				yield(ObjectInfo{}, err)
				return
			}
			for _, o := range page.Objects {
				if !yield(o, nil) {
					return
				}
			}
			if page.Next == "" {
				return
			}
			opts.Token = page.Next
		}
	}
}

// ListAll returns every object under prefix.
func ListAll(ctx context.Context, s Store, prefix string) ([]ObjectInfo, error) {
	var out []ObjectInfo
	for o, err := range Walk(ctx, s, prefix) {
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}
