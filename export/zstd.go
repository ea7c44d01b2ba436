package export

import (
	"fmt"
	"io"
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// keptZstd is arrow-go's zstd codec with its page encoders kept between pages. arrow-go
// takes an encoder from a sync.Pool for every page it compresses, and the pool is emptied by
// each garbage collection; an export allocates fast enough to collect every few pages, so
// nearly every page built a new encoder (about a megabyte of tables and buffers, zeroed).
// Here a bounded free list keeps them across collections. The encoders are made with the
// options arrow-go uses, so the bytes written are the same; decoding and streaming are
// arrow-go's own.
type keptZstd struct {
	base compress.Codec
	mu   sync.Mutex
	free map[zstd.EncoderLevel][]*zstd.Encoder
}

// maxKeptEncoders bounds the encoders kept per level: one per page compressed at once (a
// few per chunk in flight).
const maxKeptEncoders = 16

var useKeptZstd = sync.OnceFunc(func() {
	base, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		panic(fmt.Sprintf("export: arrow-go has no zstd codec: %v", err))
	}
	compress.RegisterCodec(compress.Codecs.Zstd, &keptZstd{base: base, free: map[zstd.EncoderLevel][]*zstd.Encoder{}})
})

func zstdLevelOf(level int) zstd.EncoderLevel {
	if level == compress.DefaultCompressionLevel {
		return zstd.SpeedDefault
	}
	return zstd.EncoderLevelFromZstd(level)
}

func (z *keptZstd) EncodeLevel(dst, src []byte, level int) []byte {
	l := zstdLevelOf(level)
	enc := z.get(l)
	out := enc.EncodeAll(src, dst[:0])
	z.put(l, enc)
	return out
}

func (z *keptZstd) get(l zstd.EncoderLevel) *zstd.Encoder {
	z.mu.Lock()
	if n := len(z.free[l]); n > 0 {
		enc := z.free[l][n-1]
		z.free[l] = z.free[l][:n-1]
		z.mu.Unlock()
		return enc
	}
	z.mu.Unlock()
	enc, err := zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(l),
		zstd.WithEncoderConcurrency(1), zstd.WithAllLitEntropyCompression(true))
	if err != nil { // only for invalid options, which these are not
		panic(fmt.Sprintf("export: zstd encoder: %v", err))
	}
	return enc
}

func (z *keptZstd) put(l zstd.EncoderLevel, enc *zstd.Encoder) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if len(z.free[l]) < maxKeptEncoders {
		z.free[l] = append(z.free[l], enc)
	}
}

func (z *keptZstd) Encode(dst, src []byte) []byte { return z.base.Encode(dst, src) }
func (z *keptZstd) CompressBound(n int64) int64   { return z.base.CompressBound(n) }
func (z *keptZstd) Decode(dst, src []byte) []byte { return z.base.Decode(dst, src) }
func (z *keptZstd) DecodeWithError(dst, src []byte) ([]byte, error) {
	return compress.Decode(z.base, dst, src)
}

func (z *keptZstd) NewReader(r io.Reader) io.ReadCloser {
	return z.base.(compress.StreamingCodec).NewReader(r)
}

func (z *keptZstd) NewWriter(w io.Writer) io.WriteCloser {
	return z.base.(compress.StreamingCodec).NewWriter(w)
}

func (z *keptZstd) NewWriterLevel(w io.Writer, level int) (io.WriteCloser, error) {
	return z.base.(compress.StreamingCodec).NewWriterLevel(w, level)
}
