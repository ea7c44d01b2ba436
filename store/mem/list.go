package mem

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/wharfdata/wharf/store/driver"
)

// List returns one sorted page of the keys under opts.Prefix. Page.Next is the last key or
// common prefix returned, and is set only when more follow.
func (s *Store) List(ctx context.Context, opts *driver.ListOptions) (driver.Page, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := driver.NewPager(opts)
	for _, key := range slices.Sorted(maps.Keys(s.objs)) {
		if !strings.HasPrefix(key, opts.Prefix) {
			continue
		}
		if opts.Delimiter != "" {
			rest := key[len(opts.Prefix):]
			if i := strings.Index(rest, opts.Delimiter); i >= 0 {
				if !p.AddPrefix(opts.Prefix + rest[:i+len(opts.Delimiter)]) {
					break
				}
				continue
			}
		}
		info := s.objs[key].info
		info.Metadata = nil
		if !p.AddObject(info) {
			break
		}
	}
	return p.Page(), nil
}
