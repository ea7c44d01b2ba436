package backfill

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"
)

// pipeLike is a writer whose reader takes only what the test hands it: Unread reports the
// rest, and once the reader is gone with bytes left, EPIPE.
type pipeLike struct {
	mu    sync.Mutex
	b     bytes.Buffer
	taken int
	gone  bool
}

func (p *pipeLike) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gone {
		return 0, syscall.EPIPE
	}
	return p.b.Write(b)
}

func (p *pipeLike) Unread() (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.b.Len() - p.taken
	if p.gone && n > 0 {
		return 0, fmt.Errorf("%d bytes unread: %w", n, syscall.EPIPE)
	}
	return n, nil
}

// take hands the reader the next line, if one was written.
func (p *pipeLike) take() ([]byte, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := bytes.IndexByte(p.b.Bytes()[p.taken:], '\n')
	if i < 0 {
		return nil, false
	}
	line := bytes.Clone(p.b.Bytes()[p.taken : p.taken+i+1])
	p.taken += i + 1
	return line, true
}

// The stdout sink commits only the records its reader took: a reader that takes 150 lines
// and leaves fails the job (ErrSink) with at most those 150 committed, and the next run
// delivers every record the reader did not take.
func TestStdoutCommitsOnlyWhatItsReaderTook(t *testing.T) {
	src := memStore()
	c := fill(t, src, "logs/", 20, 200, "plain", "gz")
	cfg := testConfig("mem://src/logs/", "-")
	cfg.SplitMaxObjects, cfg.CommitInterval = 100, time.Millisecond
	coord := NewSolo()
	p := &pipeLike{}
	var read bytes.Buffer
	go func() {
		for n := 0; n < 150; {
			if line, ok := p.take(); ok {
				read.Write(line)
				n++
				continue
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond) // the job writes on, committing every millisecond
		p.mu.Lock()
		p.gone = true
		p.mu.Unlock()
	}()
	_, err := runJob(context.Background(), t, cfg, coord, src, NewStdout(p, cfg.CommitInterval), false)
	if !errors.Is(err, ErrSink) || !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("Run = %v, want ErrSink for the reader that left", err)
	}
	objs, _ := List(context.Background(), src, "logs/")
	sp := Pack(objs, cfg.SplitBytes, cfg.SplitMaxObjects)[0]
	st, err := readSplit(context.Background(), coord, sp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Watermark.Records > 150 || st.Status != StatusPending {
		t.Fatalf("split %s with %d records committed, want it handed back with at most the 150 the reader took", st.Status, st.Watermark.Records)
	}
	var out syncBuffer
	if _, err := runJob(context.Background(), t, cfg, coord, src, NewStdout(&out, cfg.CommitInterval), false); err != nil {
		t.Fatal(err)
	}
	c.check(t, append(read.Bytes(), out.Bytes()...), false)
}
