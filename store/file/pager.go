package file

import (
	"strings"

	"github.com/wharfdata/wharf/store"
)

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

// before reports whether every key below the directory prefix dir sorts at or before the
// token, so that the walk may skip it.
func (p *pager) before(dir string) bool {
	return p.token != "" && dir < p.token && !strings.HasPrefix(p.token, dir)
}
