package backfill

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// Compression returns how a member is compressed: by mode, or in mode auto by the key's
// extension (.gz, .gzip, .zst, .zstd) and else by the first bytes (gzip's 1f 8b, zstd's
// 28 b5 2f fd). head holds at least the first 4 bytes of the object (fewer if it is shorter).
func Compression(mode, key string, head []byte) string {
	if mode != CompressionAuto {
		return mode
	}
	switch strings.ToLower(path.Ext(key)) {
	case ".gz", ".gzip":
		return CompressionGzip
	case ".zst", ".zstd":
		return CompressionZstd
	}
	switch {
	case bytes.HasPrefix(head, gzipMagic):
		return CompressionGzip
	case bytes.HasPrefix(head, zstdMagic):
		return CompressionZstd
	}
	return CompressionNone
}

var (
	zstdPool = sync.Pool{New: func() any {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(false))
		if err != nil {
			panic(err) // only for invalid options
		}
		return d
	}}
	gzipPool  sync.Pool
	bufioPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}
)

// decoder is an open decompressing reader over a member; close returns its parts to their
// pools.
type decoder struct {
	io.Reader
	close func()
}

// openDecoder returns the member's records' bytes: gzip (every member of a multi-member
// file) and zstd (every frame of a multi-frame file, skippable frames skipped) are
// decompressed; anything else is read as it is.
func openDecoder(mode, key string, r io.Reader) (*decoder, error) {
	br := bufioPool.Get().(*bufio.Reader)
	br.Reset(r)
	head, _ := br.Peek(4)
	release := func() { br.Reset(nil); bufioPool.Put(br) }
	switch Compression(mode, key, head) {
	case CompressionGzip:
		var zr *gzip.Reader
		var err error
		if v := gzipPool.Get(); v != nil {
			zr = v.(*gzip.Reader)
			err = zr.Reset(br)
		} else {
			zr, err = gzip.NewReader(br)
		}
		if err != nil {
			release()
			return nil, fmt.Errorf("not gzip: %w", err)
		}
		zr.Multistream(true)
		return &decoder{Reader: zr, close: func() { gzipPool.Put(zr); release() }}, nil
	case CompressionZstd:
		zr := zstdPool.Get().(*zstd.Decoder)
		if err := zr.Reset(br); err != nil {
			zstdPool.Put(zr)
			release()
			return nil, fmt.Errorf("not zstd: %w", err)
		}
		return &decoder{Reader: zr, close: func() { _ = zr.Reset(nil); zstdPool.Put(zr); release() }}, nil
	}
	return &decoder{Reader: br, close: release}, nil
}
