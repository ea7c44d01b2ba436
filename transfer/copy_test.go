package transfer

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/wharfdata/wharf/internal/atomicfile"
)

// chunky gives at most per bytes a read, and records the room each read was offered.
type chunky struct {
	r     io.Reader
	per   int
	rooms []int
}

func (c *chunky) Read(p []byte) (int, error) {
	c.rooms = append(c.rooms, len(p))
	return c.r.Read(p[:min(len(p), c.per)])
}

// sizes records the size of each write.
type sizes struct {
	bytes.Buffer
	writes []int
}

func (s *sizes) Write(p []byte) (int, error) {
	s.writes = append(s.writes, len(p))
	return s.Buffer.Write(p)
}

func TestCopyCtxReadsLargeWritesSmall(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789abcdef"), 100_000) // 1.6 MB
	for _, per := range []int{16 << 10, 100 << 10, 1 << 20} {
		src := &chunky{r: bytes.NewReader(body), per: per}
		var dst sizes
		n, err := copyCtx(context.Background(), &dst, src)
		if err != nil || n != int64(len(body)) || !bytes.Equal(dst.Bytes(), body) {
			t.Fatalf("%d a read: copied %d, %v", per, n, err)
		}
		for _, room := range src.rooms {
			if room < readSize {
				t.Errorf("%d a read: a read was offered %d bytes, less than %d: net/http would copy through its buffer", per, room, readSize)
			}
		}
		for i, w := range dst.writes {
			if w > writeSize || w < writeSize && i < len(dst.writes)-1 && per < writeSize {
				t.Errorf("%d a read: write %d of %d bytes", per, i, w)
			}
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errBoom }

func TestCopyCtxFailures(t *testing.T) {
	_, err := copyCtx(context.Background(), failWriter{}, bytes.NewReader(make([]byte, 10)))
	var we *atomicfile.WriteError
	if !errors.As(err, &we) || !errors.Is(err, errBoom) {
		t.Errorf("a failed write: %v, want a WriteError", err)
	}
	_, err = copyCtx(context.Background(), io.Discard, &chunky{r: iotestErr{}, per: 1})
	if !errors.Is(err, errBoom) || errors.As(err, &we) {
		t.Errorf("a failed read: %v, want it as it is", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := copyCtx(ctx, io.Discard, bytes.NewReader(make([]byte, 10))); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

type iotestErr struct{}

func (iotestErr) Read([]byte) (int, error) { return 0, errBoom }
