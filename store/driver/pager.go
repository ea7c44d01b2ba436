package driver

import "strings"

// DefaultMaxKeys is the page size of a listing when ListOptions.MaxKeys is 0, as on S3.
const DefaultMaxKeys = 1000

// Pager fills one page of a listing for backends that produce entries themselves (the file
// and mem stores): offered objects and common prefixes in sorted order, it skips those a
// previous page returned (at or before the token, and everything under a token that is a
// common prefix) and sets Next when the page is full.
type Pager struct {
	token string
	max   int
	n     int
	last  string
	page  Page
}

// NewPager starts a page for o.
func NewPager(o *ListOptions) *Pager {
	max := o.MaxKeys
	if max <= 0 {
		max = DefaultMaxKeys
	}
	return &Pager{token: o.Token, max: max}
}

// Page returns the page filled so far.
func (p *Pager) Page() Page { return p.page }

// Skip reports whether entry was returned on an earlier page.
func (p *Pager) Skip(entry string) bool {
	if p.token == "" {
		return false
	}
	return entry <= p.token || strings.HasSuffix(p.token, "/") && strings.HasPrefix(entry, p.token)
}

// room makes room for one entry; false means the page is full and Next is set.
func (p *Pager) room() bool {
	if p.n < p.max {
		p.n++
		return true
	}
	p.page.Next = p.last
	return false
}

// AddObject offers an object; false means the page is full: stop offering.
func (p *Pager) AddObject(info ObjectInfo) bool {
	if p.Skip(info.Key) {
		return true
	}
	if !p.room() {
		return false
	}
	p.page.Objects = append(p.page.Objects, info)
	p.last = info.Key
	return true
}

// AddPrefix offers a common prefix (ending in the delimiter); a repeat of the last one is
// ignored. False means the page is full: stop offering.
func (p *Pager) AddPrefix(prefix string) bool {
	if prefix == p.last || p.Skip(prefix) {
		return true
	}
	if !p.room() {
		return false
	}
	p.page.Prefixes = append(p.page.Prefixes, prefix)
	p.last = prefix
	return true
}

// Before reports whether every key below the directory prefix dir sorts at or before the
// token, so that a walk may skip the whole directory.
func (p *Pager) Before(dir string) bool {
	return p.token != "" && dir < p.token && !strings.HasPrefix(p.token, dir)
}
