package backfill

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// chunky reads its bytes back in pieces of random sizes.
type chunky struct {
	b   []byte
	rng *rand.Rand
}

func (c *chunky) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 1+c.rng.IntN(97))], c.b)
	c.b = c.b[n:]
	return n, nil
}

// refRecords frames text the simple way: each line without its '\n' and one '\r' before it,
// blank lines dropped, a last line without '\n' kept; ends[i] is where record i's line ends
// in text (after its '\n').
func refRecords(text string) (records []string, ends []int64) {
	pos := 0
	for pos < len(text) {
		i := strings.IndexByte(text[pos:], '\n')
		next := len(text)
		if i >= 0 {
			next = pos + i + 1
		}
		l := strings.TrimSuffix(strings.TrimSuffix(text[pos:next], "\n"), "\r")
		pos = next
		if l != "" {
			records = append(records, l)
			ends = append(ends, int64(pos))
		}
	}
	return records, ends
}

// randomText is NDJSON-ish lines of up to maxLen bytes with blank lines, CRLF line ends and
// sometimes no last '\n'.
func randomText(rng *rand.Rand, lines, maxLen int) string {
	var sb strings.Builder
	for i := range lines {
		switch rng.IntN(10) {
		case 0:
			sb.WriteString("\n")
			continue
		case 1:
			sb.WriteString("\r\n")
			continue
		}
		fmt.Fprintf(&sb, `{"i":%d,"p":"%s"}`, i, strings.Repeat("x", rng.IntN(maxLen)))
		if rng.IntN(4) == 0 {
			sb.WriteString("\r")
		}
		sb.WriteString("\n")
	}
	s := sb.String()
	if rng.IntN(2) == 0 {
		s = strings.TrimSuffix(s, "\n")
	}
	return s
}

// frameAll runs a framer with buffers of size bytes over text, skipping as skip says, and
// returns the records of every batch, checking each batch's shape and watermark.
func frameAll(t *testing.T, text string, size int, maxRecord int64, skip Watermark, rng *rand.Rand) ([]string, error) {
	t.Helper()
	_, ends := refRecords(text)
	f := newFramer(&chunky{b: []byte(text), rng: rng}, maxRecord, newBufPool(), skip)
	f.release()
	f.size, f.buf = size, make([]byte, size)
	var out []string
	for {
		done, err := f.fill()
		if err != nil {
			return out, err
		}
		var b Batch
		f.cut(&b, done)
		if len(b.Data) > 0 && b.Data[len(b.Data)-1] != '\n' || b.Len() > 0 && b.Ends[b.Len()-1] != len(b.Data)-1 {
			t.Fatalf("a batch does not end with its last record's '\\n': %q %v", b.Data, b.Ends)
		}
		for i := range b.Len() {
			out = append(out, string(b.Record(i)))
		}
		if b.Len() != bytes.Count(b.Data, []byte{'\n'}) {
			t.Fatalf("batch of %d records holds %d lines", b.Len(), bytes.Count(b.Data, []byte{'\n'}))
		}
		if !done && (f.afterRecord != int64(len(out))+skip.Record || f.afterPos != ends[f.afterRecord-1]) {
			t.Fatalf("after %d records (+%d skipped) the framer says record %d at byte %d, want byte %d",
				len(out), skip.Record, f.afterRecord, f.afterPos, ends[len(out)+int(skip.Record)-1])
		}
		if done {
			return out, nil
		}
	}
}

func TestFramerCutsRecordsAsTheSimpleWayDoes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 300 {
		text := randomText(rng, 1+rng.IntN(60), 1+rng.IntN(150))
		want, ends := refRecords(text)
		size := 16 + rng.IntN(300)
		got, err := frameAll(t, text, size, 1<<20, Watermark{}, rng)
		if err != nil {
			t.Fatalf("round %d (buffer %d): %v", round, size, err)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") || len(got) != len(want) {
			t.Fatalf("round %d (buffer %d):\n got %q\nwant %q", round, size, got, want)
		}
		if len(want) == 0 {
			continue
		}
		k := rng.IntN(len(want) + 1)
		skip := Watermark{Record: int64(k)}
		if k > 0 {
			skip.Offset = ends[k-1]
		}
		got, err = frameAll(t, text, size, 1<<20, skip, rng)
		if err != nil || strings.Join(got, "\n") != strings.Join(want[k:], "\n") {
			t.Fatalf("round %d, resumed after %d records: %v\n got %q\nwant %q", round, k, err, got, want[k:])
		}
		if k > 0 {
			skip.Offset++
			var d errDrift
			if _, err := frameAll(t, text, size, 1<<20, skip, rng); !errors.As(err, &d) {
				t.Fatalf("round %d: a watermark one byte off: %v, want drift", round, err)
			}
		}
		var d errDrift
		if _, err := frameAll(t, text, size, 1<<20, Watermark{Record: int64(len(want) + 1)}, rng); !errors.As(err, &d) {
			t.Fatalf("round %d: a watermark past the last record: %v, want drift", round, err)
		}
	}
}

func TestFramerRefusesARecordOverTheLimit(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	long := strings.Repeat("y", 2000)
	for _, text := range []string{
		"a\n" + long + "\nb\n",
		"a\n" + long + "\r\nb\n",
		"a\n" + long,
		long + long + long + long,
	} {
		_, err := frameAll(t, text, 64, 1024, Watermark{}, rng)
		if !errors.Is(err, errTooLong) {
			t.Fatalf("%d bytes: %v, want errTooLong", len(text), err)
		}
	}
	// At the limit, a record fits however the buffers fall.
	text := "a\n" + long[:1024] + "\r\n" + long[:1024] + "\n"
	got, err := frameAll(t, text, 64, 1024, Watermark{}, rng)
	if err != nil || len(got) != 3 || got[1] != long[:1024] {
		t.Fatalf("records at the limit: %v, %d records", err, len(got))
	}
}
