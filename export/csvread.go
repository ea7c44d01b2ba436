package export

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// csvRecords reads the records of a CSV part as export writes them: fields separated by
// commas, a field in double quotes when it holds a comma, a quote, CR or LF (a quote inside
// doubled), records ending in LF (or CRLF). Unlike encoding/csv it keeps an empty line as a
// record of one empty field: that is how a single column's NULL is written.
type csvRecords struct {
	r    *bufio.Reader
	line int64
	rec  []string
	buf  []byte
}

func newCSVRecords(r io.Reader) *csvRecords { return &csvRecords{r: bufio.NewReaderSize(r, 1<<16)} }

// next returns the next record (valid until the next call), or io.EOF after the last.
func (c *csvRecords) next() ([]string, error) {
	c.rec, c.buf = c.rec[:0], c.buf[:0]
	c.line++
	b, err := c.r.ReadByte()
	if err != nil {
		return nil, err // io.EOF: no more records
	}
	quoted, inQuotes := false, false // the field began with a quote; inside it now
	for {
		if !inQuotes && b == '\r' {
			if nb, perr := c.r.Peek(1); perr == nil && nb[0] == '\n' {
				b, _ = c.r.ReadByte() // CRLF ends the record as LF does
			}
		}
		switch {
		case inQuotes && b == '"':
			if nb, perr := c.r.Peek(1); perr == nil && nb[0] == '"' {
				_, _ = c.r.ReadByte()
				c.buf = append(c.buf, '"') // a doubled quote
			} else {
				inQuotes = false
			}
		case inQuotes:
			if b == '\n' {
				c.line++
			}
			c.buf = append(c.buf, b)
		case b == '"' && !quoted && len(c.buf) == 0:
			quoted, inQuotes = true, true
		case b == ',':
			c.rec = append(c.rec, string(c.buf))
			c.buf, quoted = c.buf[:0], false
		case b == '\n':
			c.rec = append(c.rec, string(c.buf))
			return c.rec, nil
		case quoted:
			return nil, fmt.Errorf("line %d: %q after a closing quote", c.line, b)
		default:
			c.buf = append(c.buf, b)
		}
		if b, err = c.r.ReadByte(); err != nil {
			if !errors.Is(err, io.EOF) {
				return nil, err
			}
			if inQuotes {
				return nil, fmt.Errorf("line %d: a quoted field is not closed", c.line)
			}
			c.rec = append(c.rec, string(c.buf))
			return c.rec, nil // a last record without its LF
		}
	}
}
