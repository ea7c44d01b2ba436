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
	if err := ctx.Err(); err != nil {
		return driver.Page{}, err
	}
	var o driver.ListOptions
	if opts != nil {
		o = *opts
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := driver.NewPager(&o)
	for _, key := range slices.Sorted(maps.Keys(s.objs)) {
		if !strings.HasPrefix(key, o.Prefix) {
			continue
		}
		if o.Delimiter != "" {
			rest := key[len(o.Prefix):]
			if i := strings.Index(rest, o.Delimiter); i >= 0 {
				if !p.AddPrefix(o.Prefix + rest[:i+len(o.Delimiter)]) {
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
