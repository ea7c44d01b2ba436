package main

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/store"
)

// envTestPause is a TEST-ONLY hook, read by `wharf export` so that the crash test can kill the
// process at chosen points: a comma-separated list of point:duration, where point is
//
//	part-upload     sleep in the middle of each part's upload (after its first body bytes)
//	after-part      sleep after each part is written, before the next one or the manifest
//	after-manifest  sleep after manifest.json is written, before _SUCCESS
//
// for example WHARF_TEST_EXPORT_PAUSE=after-manifest:200ms. It only slows the export down; it
// changes nothing it writes. Unset (always, outside tests) it costs nothing.
const envTestPause = "WHARF_TEST_EXPORT_PAUSE"

// testPauses parses spec and returns an export.Options.WrapStore that sleeps at its points,
// or nil when spec is empty or names no known point.
func testPauses(spec string) func(store.Store) store.Store {
	p := pausingStore{}
	for item := range strings.SplitSeq(spec, ",") {
		name, dur, _ := strings.Cut(strings.TrimSpace(item), ":")
		d, err := time.ParseDuration(dur)
		if err != nil {
			continue
		}
		switch name {
		case "part-upload":
			p.upload = d
		case "after-part":
			p.afterPart = d
		case "after-manifest":
			p.afterManifest = d
		}
	}
	if p == (pausingStore{}) {
		return nil
	}
	return func(s store.Store) store.Store { p.Store = s; return &p }
}

// pausingStore forwards every call to the store it wraps, the optional ones too, sleeping at
// the configured points.
type pausingStore struct {
	store.Store
	upload, afterPart, afterManifest time.Duration
}

func (p *pausingStore) Unwrap() store.Store                  { return p.Store }
func (p *pausingStore) Describe() store.Description          { return store.Describe(p.Store) }
func (p *pausingStore) MakeBucket(ctx context.Context) error { return store.MakeBucket(ctx, p.Store) }

func (p *pausingStore) Copy(ctx context.Context, src, dst string, opts *store.PutOptions) (store.ObjectInfo, error) {
	return store.Copy(ctx, p.Store, src, dst, opts)
}

func (p *pausingStore) DeleteMany(ctx context.Context, keys []string) error {
	return store.DeleteMany(ctx, p.Store, keys)
}

func (p *pausingStore) Put(ctx context.Context, key string, body io.Reader, opts *store.PutOptions) (store.ObjectInfo, error) {
	part := strings.HasPrefix(key, "part-")
	if part && p.upload > 0 {
		body = &slowReader{r: body, d: p.upload}
	}
	info, err := p.Store.Put(ctx, key, body, opts)
	switch {
	case err != nil:
	case part:
		time.Sleep(p.afterPart)
	case key == export.ManifestKey:
		time.Sleep(p.afterManifest)
	}
	return info, err
}

// slowReader sleeps once, after the first bytes of a body have been read.
type slowReader struct {
	r     io.Reader
	d     time.Duration
	slept bool
}

func (s *slowReader) Read(b []byte) (int, error) {
	n, err := s.r.Read(b)
	if n > 0 && !s.slept {
		s.slept = true
		time.Sleep(s.d)
	}
	return n, err
}
