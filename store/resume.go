package store

import (
	"context"
	"errors"
	"io"

	"github.com/wharfdata/wharf/store/driver"
)

// resumingBody reads an object body and, when the stream breaks with a transport fault,
// reopens it at the next byte with a Get pinned to the original ETag, within the policy's
// transport attempts.
type resumingBody struct {
	ctx    context.Context
	s      *Store
	key    string // the full key in the bucket
	opts   GetOptions
	etag   string
	body   io.ReadCloser
	read   int64
	faults int
}

func (b *resumingBody) Read(p []byte) (int, error) {
	for {
		n, err := b.body.Read(p)
		b.read += int64(n)
		if err == nil || err == io.EOF || n > 0 {
			if err != nil && err != io.EOF {
				// Report the bytes now; the fault returns on the next Read.
				return n, nil
			}
			return n, err
		}
		if b.ctx.Err() != nil {
			return 0, b.ctx.Err()
		}
		if driver.FaultOf(err) != driver.FaultTransport && !driver.IsBodyFault(err) && !driver.IsContext(err) {
			return 0, err
		}
		b.faults++
		if b.faults >= b.s.policy.TransportAttempts || b.etag == "" {
			return 0, &Error{Op: "get", Key: b.key, Kind: ErrUnavailable, Err: err, Attempts: b.faults}
		}
		if err := b.reopen(); err != nil {
			return 0, err
		}
	}
}

func (b *resumingBody) reopen() error {
	b.body.Close()
	o := GetOptions{IfMatch: b.etag, Offset: b.opts.Offset + b.read}
	if b.opts.Length > 0 {
		o.Length = b.opts.Length - b.read
	}
	obj, err := b.s.get(b.ctx, b.key, &o)
	if err != nil {
		return err
	}
	if obj.Info.ETag != "" && obj.Info.ETag != b.etag {
		obj.Close()
		return &Error{Op: "get", Key: b.key, Kind: ErrPreconditionFailed,
			Err: errors.New("object changed while it was being read")}
	}
	b.body = obj.ReadCloser
	return nil
}

func (b *resumingBody) Close() error { return b.body.Close() }
