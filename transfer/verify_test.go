package transfer

import (
	"bytes"
	"context"
	"testing"

	"github.com/wharfdata/wharf/internal/crc32c"
)

// stingy takes at most per bytes a write, without an error: copyCtx writes the rest again.
type stingy struct {
	bytes.Buffer
	per int
}

func (s *stingy) Write(p []byte) (int, error) { return s.Buffer.Write(p[:min(len(p), s.per)]) }

func TestSumWriterHashesWhatWasWrittenOnce(t *testing.T) {
	body := bytes.Repeat([]byte("wharf sums what it writes "), 50_000) // 1.3 MB
	for _, per := range []int{1000, writeSize, 1 << 20} {
		dst := &stingy{per: per}
		sum := &sumWriter{w: dst}
		n, err := copyCtx(context.Background(), sum, &chunky{r: bytes.NewReader(body), per: 100 << 10})
		if err != nil || n != int64(len(body)) || !bytes.Equal(dst.Bytes(), body) {
			t.Fatalf("%d a write: copied %d, %v", per, n, err)
		}
		if want := crc32c.Sum(body); sum.crc != want {
			t.Errorf("%d a write: CRC-32C %08x, the body's is %08x", per, sum.crc, want)
		}
	}
}
