package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/transfer"
)

// source is the open source of a copy: its bytes and what is known about them (Size is -1
// when unknown).
type source struct {
	io.Reader
	info  store.ObjectInfo
	close func() error
}

func (s *source) Close() error { return s.close() }

func (a *app) openSource(ctx context.Context, e endpoint) (*source, error) {
	switch e.kind {
	case endStdio:
		nop := func() error { return nil }
		info := store.ObjectInfo{Size: -1, ContentType: transfer.DefaultContentType}
		return &source{Reader: cancelable(ctx, a.in), info: info, close: nop}, nil
	case endLocal:
		return openLocal(e.path)
	}
	s, err := a.open(ctx, e.t.loc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.raw, err)
	}
	obj, err := s.Get(ctx, e.t.key, nil)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("%s: %w", e.raw, err)
	}
	closeBoth := func() error {
		err := obj.Close()
		if cerr := s.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return &source{Reader: obj, info: obj.Info, close: closeBoth}, nil
}

func openLocal(path string) (*source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, transfer.LocalError("open", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, transfer.LocalError("stat", path, err)
	}
	if fi.IsDir() {
		f.Close()
		return nil, usageErr(fmt.Errorf("cp: %s is a directory: cp copies one file", path))
	}
	info := store.ObjectInfo{Size: fi.Size(), ContentType: transfer.ContentTypeOf(path)}
	return &source{Reader: f, info: info, close: f.Close}, nil
}

// writeDest streams src into the destination and returns what it recorded.
func (a *app) writeDest(ctx context.Context, e endpoint, src *source, ifAbsent bool) (store.ObjectInfo, error) {
	switch e.kind {
	case endStdio:
		n, err := copyCtx(ctx, a.out, src)
		return store.ObjectInfo{Size: n}, err
	case endLocal:
		n, err := writeFileAtomic(ctx, e.path, src, ifAbsent)
		return store.ObjectInfo{Key: e.path, Size: n}, err
	}
	s, err := a.open(ctx, e.t.loc)
	if err != nil {
		return store.ObjectInfo{}, fmt.Errorf("%s: %w", e.raw, err)
	}
	defer s.Close()
	if e.t.loc.Scheme == "file" {
		// Like a local destination, a directory URL is made as needed.
		if err := s.MakeBucket(ctx); err != nil {
			return store.ObjectInfo{}, fmt.Errorf("%s: %w", e.raw, err)
		}
	}
	opts := &store.PutOptions{IfNoneMatch: ifAbsent, Size: src.info.Size}
	store.Carry(opts, src.info) // content type, standard headers, metadata but the put-id
	info, err := s.Put(ctx, e.t.key, src, opts)
	if err != nil {
		return info, fmt.Errorf("%s: %w", e.raw, err)
	}
	return info, nil
}
