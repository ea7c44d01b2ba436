package gcs

import (
	"context"
	"errors"
	"slices"
	"strings"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"

	"github.com/wharfdata/wharf/store/driver"
)

// listAttrs are the only object fields a listing asks for.
var listAttrs = []string{"Name", "Size", "Generation", "Updated"}

// List returns one page of the keys under opts.Prefix in sorted order: at most MaxKeys (default
// 1,000) objects and prefixes together. Page tokens are wharf's own, as driver.Pager makes
// them: the page's last entry; the next page starts there with the list request's startOffset.
// GCS's own page tokens are followed only within a page. They are not trusted across pages:
// with a delimiter, fake-gcs-server applies maxResults to objects alone, returns every prefix
// from the start offset on (beyond the page's last object), and repeats them on every page.
// So a page of a truncated answer takes entries only up to its last object, and asks again
// from there.
func (b *Bucket) List(ctx context.Context, opts *driver.ListOptions) (driver.Page, error) {
	c := call{op: "list", key: opts.Prefix}
	pager := driver.NewPager(opts)
	max := opts.MaxKeys
	if max <= 0 {
		max = driver.DefaultMaxKeys
	}
	cursor := opts.Token
	for {
		it := b.objects(ctx, opts, cursor, max+2)
		next, done, err := b.listFrom(it, pager, cursor)
		switch {
		case err != nil:
			return driver.Page{}, b.notFound(ctx, c, mapError(ctx, c, err))
		case done:
			return pager.Page(), nil
		}
		cursor = next
	}
}

// objects starts a listing at cursor: at the key itself (the pager skips it again), or past
// every key below it when it is a prefix.
func (b *Bucket) objects(ctx context.Context, opts *driver.ListOptions, cursor string, pageSize int) *storage.ObjectIterator {
	q := &storage.Query{Prefix: opts.Prefix, Delimiter: opts.Delimiter, StartOffset: cursor, Projection: storage.ProjectionNoACL}
	if strings.HasSuffix(cursor, "/") {
		q.StartOffset = cursor[:len(cursor)-1] + "0" // '0' is the byte after '/'
	}
	_ = q.SetAttrSelection(listAttrs)
	it := b.bucket.Objects(ctx, q)
	it.PageInfo().MaxSize = pageSize
	return it
}

// listFrom offers the pages of it to pager until the pager is full (done), the listing ends
// (done), or a truncated page has been taken up to its frontier, which it returns as the next
// cursor.
func (b *Bucket) listFrom(it *storage.ObjectIterator, pager *driver.Pager, cursor string) (string, bool, error) {
	for {
		entries, truncated, err := nextPage(it)
		if err != nil {
			return "", false, err
		}
		limit, ok := frontier(entries, truncated, cursor)
		for _, e := range entries {
			if ok && e.name > limit {
				break
			}
			if !ok && truncated {
				break
			}
			if !e.offer(pager) {
				return "", true, nil
			}
		}
		switch {
		case !truncated:
			return "", true, nil
		case ok:
			return limit, false, nil
		}
		// A truncated page with nothing past the cursor: follow GCS's own token.
	}
}

// entry is an object or a common prefix of a listing page.
type entry struct {
	name   string
	prefix bool
	info   driver.ObjectInfo
}

func (e entry) offer(p *driver.Pager) bool {
	if e.prefix {
		return p.AddPrefix(e.name)
	}
	return p.AddObject(e.info)
}

// nextPage returns the objects and prefixes of the iterator's next page, merged in sorted
// order, and whether GCS said more follow.
func nextPage(it *storage.ObjectIterator) ([]entry, bool, error) {
	first, err := it.Next()
	if errors.Is(err, iterator.Done) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	n := it.PageInfo().Remaining()
	entries := make([]entry, 0, n+1)
	entries = append(entries, toEntry(first))
	for range n {
		a, err := it.Next()
		if err != nil {
			return nil, false, err
		}
		entries = append(entries, toEntry(a))
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	return entries, it.PageInfo().Token != "", nil
}

func toEntry(a *storage.ObjectAttrs) entry {
	if a.Prefix != "" {
		return entry{name: a.Prefix, prefix: true}
	}
	return entry{name: a.Name, info: driver.ObjectInfo{
		Key: a.Name, Size: a.Size, ETag: etag(a.Generation), LastModified: seconds(a.Updated),
	}}
}

// frontier returns how far a page can be trusted. All of an untruncated page. Of a truncated
// one, up to its last object past the cursor (fake-gcs-server's prefixes run ahead of its
// objects); with no object past the cursor, up to its last prefix (a page of prefixes); with
// neither, nothing (ok false).
func frontier(entries []entry, truncated bool, cursor string) (string, bool) {
	if !truncated {
		return "", false
	}
	var lastObj, lastPrefix string
	for _, e := range entries {
		switch {
		case e.name <= cursor:
		case e.prefix:
			lastPrefix = e.name
		default:
			lastObj = e.name
		}
	}
	if lastObj != "" {
		return lastObj, true
	}
	return lastPrefix, lastPrefix != ""
}
