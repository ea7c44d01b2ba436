package store

import (
	"fmt"
	"hash"
	"io"

	"github.com/wharfdata/wharf/internal/crc32c"
)

// checkedBody reads a put's body and, at its end, fails with ErrChecksumMismatch instead of
// io.EOF when the bytes' CRC-32C is not want: the backend that reads it fails before it
// commits anything.
type checkedBody struct {
	r    io.Reader
	h    hash.Hash32
	want string
	key  string
	n    int64
}

func checkBody(r io.Reader, key, want string) *checkedBody {
	if r == nil {
		r = eofReader{}
	}
	return &checkedBody{r: r, h: crc32c.New(), want: want, key: key}
}

func (c *checkedBody) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	c.n += int64(n)
	if err == io.EOF {
		if got := crc32c.Format(c.h.Sum32()); got != c.want {
			return n, &Error{Op: "put", Key: c.key, Kind: ErrChecksumMismatch,
				Err: fmt.Errorf("the %d bytes read have CRC-32C %s, their source vouched for %s", c.n, got, c.want)}
		}
	}
	return n, err
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
