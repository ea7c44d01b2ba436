package mem

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/wharfdata/wharf/store"
)

// DefaultMaxKeys is the page size when ListOptions.MaxKeys is 0.
const DefaultMaxKeys = 1000

// List returns one sorted page of the keys under opts.Prefix. Page.Next is the last key or
// common prefix returned, and is set only when more follow.
func (s *Store) List(ctx context.Context, opts *store.ListOptions) (store.Page, error) {
	if err := ctx.Err(); err != nil {
		return store.Page{}, err
	}
	var o store.ListOptions
	if opts != nil {
		o = *opts
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := newPager(&o)
	for _, key := range slices.Sorted(maps.Keys(s.objs)) {
		if !strings.HasPrefix(key, o.Prefix) {
			continue
		}
		if o.Delimiter != "" {
			rest := key[len(o.Prefix):]
			if i := strings.Index(rest, o.Delimiter); i >= 0 {
				if !p.addPrefix(o.Prefix + rest[:i+len(o.Delimiter)]) {
					break
				}
				continue
			}
		}
		info := s.objs[key].info
		info.Metadata = nil
		if !p.addObject(info) {
			break
		}
	}
	return p.page, nil
}

// pager fills one page from entries offered in sorted order, skipping those at or before the
// token (and, when the token is a common prefix, everything under it).
type pager struct {
	token string
	max   int
	n     int
	last  string
	page  store.Page
}

func newPager(o *store.ListOptions) *pager {
	max := o.MaxKeys
	if max <= 0 {
		max = DefaultMaxKeys
	}
	return &pager{token: o.Token, max: max}
}

// skip reports whether entry was returned on an earlier page.
func (p *pager) skip(entry string) bool {
	if p.token == "" {
		return false
	}
	return entry <= p.token || strings.HasSuffix(p.token, "/") && strings.HasPrefix(entry, p.token)
}

// room makes room for entry; false means the page is full and Next is set.
func (p *pager) room() bool {
	if p.n < p.max {
		p.n++
		return true
	}
	p.page.Next = p.last
	return false
}

func (p *pager) addObject(info store.ObjectInfo) bool {
	if p.skip(info.Key) {
		return true
	}
	if !p.room() {
		return false
	}
	p.page.Objects = append(p.page.Objects, info)
	p.last = info.Key
	return true
}

func (p *pager) addPrefix(prefix string) bool {
	if prefix == p.last || p.skip(prefix) {
		return true
	}
	if !p.room() {
		return false
	}
	p.page.Prefixes = append(p.page.Prefixes, prefix)
	p.last = prefix
	return true
}
