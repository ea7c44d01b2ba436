package icebird

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/wharfdata/wharf/store"
)

// RecodeManifests rewrites, in place, every Avro file below metadata/ of the table st is
// opened at whose codec is deflate (every manifest and manifest list iceberg-go writes) as
// the same records with the codec null, and returns how many it rewrote. icebird 0.3.1
// cannot inflate them (see the package documentation); a test calls this to read the rest of
// a table with icebird all the same, and must say so. The manifest list's manifest_length
// then no longer matches its manifests' sizes; neither icebird nor iceberg-go reads it.
func RecodeManifests(ctx context.Context, st *store.Store) (int, error) {
	n := 0
	for o, err := range st.Walk(ctx, "metadata/") {
		if err != nil {
			return n, err
		}
		if !strings.HasSuffix(o.Key, ".avro") {
			continue
		}
		obj, err := st.Get(ctx, o.Key, nil)
		if err != nil {
			return n, err
		}
		b, err := io.ReadAll(obj)
		obj.Close()
		if err != nil {
			return n, err
		}
		out, changed, err := RecodeAvro(b)
		if err != nil {
			return n, fmt.Errorf("icebird: %s: %w", o.Key, err)
		}
		if !changed {
			continue
		}
		if _, err := st.Put(ctx, o.Key, bytes.NewReader(out), &store.PutOptions{Size: int64(len(out))}); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// RecodeAvro returns the Avro object container file b with its blocks inflated and its
// avro.codec "null", the records' bytes unchanged; false when b's codec is not deflate.
func RecodeAvro(b []byte) ([]byte, bool, error) {
	r := &avroReader{b: b}
	if !bytes.HasPrefix(b, []byte("Obj\x01")) {
		return nil, false, errors.New("not an Avro object container file")
	}
	r.off = 4
	keys, vals := r.meta()
	sync := r.bytes(16)
	if r.err != nil {
		return nil, false, r.err
	}
	deflate := false
	out := append([]byte(nil), "Obj\x01"...)
	out = binary.AppendVarint(out, int64(len(keys)))
	for i, k := range keys {
		v := vals[i]
		if k == "avro.codec" {
			deflate = string(v) == "deflate"
			v = []byte("null")
		}
		out = appendBytes(appendBytes(out, []byte(k)), v)
	}
	out = append(binary.AppendVarint(out, 0), sync...)
	if !deflate {
		return nil, false, r.err
	}
	for r.off < len(b) && r.err == nil {
		count := r.long()
		data := r.bytes(int(r.long()))
		if !bytes.Equal(r.bytes(16), sync) && r.err == nil {
			return nil, false, errors.New("a block's sync marker differs from the header's")
		}
		if r.err != nil {
			break
		}
		raw, err := io.ReadAll(flate.NewReader(bytes.NewReader(data)))
		if err != nil {
			return nil, false, fmt.Errorf("inflating a block: %w", err)
		}
		out = append(appendBytes(binary.AppendVarint(out, count), raw), sync...)
	}
	return out, true, r.err
}

func appendBytes(out, p []byte) []byte { return append(binary.AppendVarint(out, int64(len(p))), p...) }

// avroReader reads Avro's binary encoding from b; the first failure sticks in err.
type avroReader struct {
	b   []byte
	off int
	err error
}

// long reads a zig-zag varint (Avro's int and long, Go's binary.Varint).
func (r *avroReader) long() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b[r.off:])
	if n <= 0 {
		r.err = errors.New("a truncated or overlong varint")
		return 0
	}
	r.off += n
	return v
}

func (r *avroReader) bytes(n int) []byte {
	if r.err == nil && (n < 0 || r.off+n > len(r.b)) {
		r.err = errors.New("truncated")
	}
	if r.err != nil {
		return nil
	}
	p := r.b[r.off : r.off+n]
	r.off += n
	return p
}

// meta reads the header's metadata, a map of bytes, in its order.
func (r *avroReader) meta() (keys []string, vals [][]byte) {
	for r.err == nil {
		n := r.long()
		if n == 0 {
			break
		}
		if n < 0 { // a block with its byte size
			n = -n
			r.long()
		}
		for range n {
			keys = append(keys, string(r.bytes(int(r.long()))))
			vals = append(vals, r.bytes(int(r.long())))
		}
	}
	return keys, vals
}
