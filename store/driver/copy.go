package driver

import (
	"context"
	"errors"
)

// StreamCopy copies src to dst through b's own Get and Put, never staging the bytes: for a
// Copier whose server-side copy cannot do what o asks (Azure's Copy Blob sets no content
// type; a GCS rewrite cannot remove a header). The read is pinned to ifMatch when given; what
// o leaves unset comes from the source (Carry). A failure is reported as the copy's.
func StreamCopy(ctx context.Context, b Bucket, src, dst, ifMatch string, o PutOptions) (ObjectInfo, error) {
	obj, err := b.Get(ctx, src, &GetOptions{IfMatch: ifMatch})
	if err != nil {
		return ObjectInfo{}, asCopy(err)
	}
	defer obj.Close()
	o.Size = obj.Info.Size
	Carry(&o, obj.Info)
	info, err := b.Put(ctx, dst, obj, &o)
	return info, asCopy(err)
}

func asCopy(err error) error {
	var e *Error
	if errors.As(err, &e) {
		e.Op = "copy"
	}
	return err
}
