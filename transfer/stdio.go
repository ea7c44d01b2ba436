package transfer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/wharfdata/wharf/internal/atomicfile"
	"github.com/wharfdata/wharf/internal/crc32c"
	"github.com/wharfdata/wharf/store"
)

// runStream copies the one object of a stream plan: from its source's reader into the
// destination.
func (p *Plan) runStream(ctx context.Context) (Copied, error) {
	src, dst := p.src, p.dst
	res := Copied{Source: src.String(), Destination: dst.String()}
	r, err := p.openSource(ctx)
	if err != nil {
		return res, err
	}
	defer r.Close()
	info, err := p.writeDest(ctx, r)
	res.Size, res.ETag = info.Size, info.ETag
	return res, err
}

// source is the open source of a stream: its bytes and what is known about them (Size is
// -1 when unknown).
type source struct {
	io.Reader
	info  store.ObjectInfo
	close func() error
}

func (s *source) Close() error { return s.close() }

func (p *Plan) openSource(ctx context.Context) (*source, error) {
	e := p.src
	switch e.kind {
	case endStdio:
		nop := func() error { return nil }
		info := store.ObjectInfo{Size: -1, ContentType: DefaultContentType}
		return &source{Reader: cancelable(ctx, p.o.Stdin), info: info, close: nop}, nil
	case endLocal:
		return openLocal(e.path)
	}
	if err := p.stores.openOne(ctx, e, false); err != nil {
		return nil, err
	}
	obj, err := e.st.Get(ctx, e.base, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.raw, err)
	}
	return &source{Reader: obj, info: obj.Info, close: obj.Close}, nil
}

func openLocal(path string) (*source, error) {
	f, fi, err := openFile(path)
	if errors.Is(err, errIsDir) {
		return nil, usage("cp: %s is a directory: cp copies one file", path)
	}
	if err != nil {
		return nil, err
	}
	info := store.ObjectInfo{Size: fi.Size(), ContentType: ContentTypeOf(path)}
	return &source{Reader: f, info: info, close: f.Close}, nil
}

// writeDest streams src into the destination and returns what it recorded.
func (p *Plan) writeDest(ctx context.Context, src *source) (store.ObjectInfo, error) {
	e := p.dst
	ifAbsent := p.o.IfAbsent
	switch e.kind {
	case endStdio:
		sum := &sumWriter{w: p.o.Stdout}
		n, err := atomicfile.Copy(ctx, sum, src)
		if err == nil && src.info.CRC32C != "" {
			if got := crc32c.Format(sum.crc); got != src.info.CRC32C {
				// Too late to hold the bytes back: the exit status says they are not the object's.
				err = &store.Error{Op: "get", Key: p.src.raw, Kind: store.ErrChecksumMismatch,
					Err: fmt.Errorf("the %d bytes written to standard output have CRC-32C %s, the object carries %s: discard them", n, got, src.info.CRC32C)}
			}
		}
		return store.ObjectInfo{Size: n}, err
	case endLocal:
		n, err := writeFileAtomic(ctx, e.path, src, ifAbsent)
		return store.ObjectInfo{Key: e.path, Size: n}, err
	}
	if e.st == nil {
		if err := p.stores.openOne(ctx, e, true); err != nil {
			return store.ObjectInfo{}, err
		}
	}
	opts := &store.PutOptions{IfNoneMatch: ifAbsent, Size: src.info.Size}
	store.Carry(opts, src.info) // content type, standard headers, metadata but the put-id
	p.o.overlay(opts)
	info, err := e.st.Put(ctx, e.base, src, opts)
	if err != nil {
		return info, fmt.Errorf("%s: %w", e.raw, err)
	}
	return info, nil
}

// cancelable returns a reader of r whose Read returns ctx's error as soon as ctx ends, even
// while r itself is blocked (standard input waiting for a producer).
func cancelable(ctx context.Context, r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		_, err := io.Copy(pw, r)
		pw.CloseWithError(err)
	}()
	context.AfterFunc(ctx, func() { pw.CloseWithError(ctx.Err()) })
	return pr
}

// writeFileAtomic writes r to path durably and whole (atomicfile.Write): a failed or
// cancelled write leaves nothing behind and never a partial file at path. With ifAbsent, an
// existing path is ErrPreconditionFailed and is never replaced, even if another process
// makes it meanwhile.
func writeFileAtomic(ctx context.Context, path string, r io.Reader, ifAbsent bool) (int64, error) {
	n, err := atomicfile.Write(ctx, path, r, ifAbsent)
	var we *atomicfile.WriteError
	switch {
	case err == nil, store.IsContext(err):
		return n, err
	case ifAbsent && errors.Is(err, fs.ErrExist):
		return n, &store.Error{Op: "put", Key: path, Kind: store.ErrPreconditionFailed,
			Err: errors.New("the file exists and --if-absent was given")}
	case errors.As(err, &we):
		return n, LocalError("write", path, we.Err)
	}
	return n, err // the source failed: it says which
}
