package upload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/crc32c"
	"github.com/wharfdata/wharf/store/driver"
)

// fake is a backend in memory: it records what the engine asks of it, and fails as told.
type fake struct {
	mu       sync.Mutex
	object   []byte
	meta     map[string]string
	singles  int
	starts   int
	sends    map[int]int // part → attempts
	commits  int
	aborts   int
	inFlight atomic.Int32
	maxIn    atomic.Int32
	inPlace  atomic.Int32 // parts sent as sections of the body
	crc      string       // the CRC-32C Single or Commit was given

	failSend   map[int]int // part → transport faults to inject
	lostCommit int         // commits whose answer is lost after they apply
	failCommit int         // commits that fail with a transport fault before they apply
}

type fakeParts struct {
	f     *fake
	opts  *driver.PutOptions
	parts map[int][]byte
	mu    sync.Mutex
}

func transport(op string) error {
	return &driver.Error{Op: op, Kind: driver.ErrUnavailable, Fault: driver.FaultTransport, Err: io.ErrUnexpectedEOF}
}

func (p *fakeParts) Send(ctx context.Context, n int, body io.ReadSeeker, size int64, crc string) error {
	f := p.f
	in := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for m := f.maxIn.Load(); in > m && !f.maxIn.CompareAndSwap(m, in); m = f.maxIn.Load() {
	}
	if _, ok := body.(*io.SectionReader); ok {
		f.inPlace.Add(1)
	}
	time.Sleep(time.Millisecond)
	f.mu.Lock()
	f.sends[n]++
	fail := f.failSend[n] > 0
	if fail {
		f.failSend[n]--
	}
	f.mu.Unlock()
	b, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	if fail {
		return transport("put")
	}
	if int64(len(b)) != size {
		return errors.New("a part of the wrong size")
	}
	if got := crc32c.Format(crc32c.Sum(b)); got != crc {
		return fmt.Errorf("part %d: sent with CRC-32C %s, its bytes have %s", n, crc, got)
	}
	p.mu.Lock()
	p.parts[n] = b
	p.mu.Unlock()
	return ctx.Err()
}

func (p *fakeParts) Commit(_ context.Context, n int, size int64, crc string) (driver.ObjectInfo, error) {
	f := p.f
	f.mu.Lock()
	defer f.mu.Unlock()
	f.commits++
	if f.failCommit > 0 {
		f.failCommit--
		return driver.ObjectInfo{}, transport("put")
	}
	var all []byte
	for i := 1; i <= n; i++ {
		all = append(all, p.parts[i]...)
	}
	f.object, f.meta, f.crc = all, maps.Clone(p.opts.Metadata), crc
	if f.lostCommit > 0 {
		f.lostCommit--
		return driver.ObjectInfo{}, transport("put")
	}
	return driver.ObjectInfo{Size: size, Metadata: f.meta}, nil
}

func (p *fakeParts) Abort(context.Context) {
	p.f.mu.Lock()
	p.f.aborts++
	p.f.mu.Unlock()
}

func (f *fake) backend(partSize int64, conc int) Backend {
	p := driver.DefaultRetryPolicy()
	p.Sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	return Backend{
		Policy: p,
		Limits: Limits{PartSize: partSize, Concurrency: conc, MinPart: 1, MaxPart: 1 << 30, MaxParts: 1000, SingleMax: 100},
		Single: func(_ context.Context, body io.Reader, size int64, opts *driver.PutOptions) (driver.ObjectInfo, error) {
			b, err := io.ReadAll(body)
			f.mu.Lock()
			defer f.mu.Unlock()
			f.singles++
			f.object, f.meta, f.crc = b, opts.Metadata, opts.CRC32C
			return driver.ObjectInfo{Size: size}, err
		},
		Start: func(_ context.Context, opts *driver.PutOptions) (Parts, error) {
			f.mu.Lock()
			f.starts++
			f.mu.Unlock()
			return &fakeParts{f: f, opts: opts, parts: map[int][]byte{}}, nil
		},
		Head: func(context.Context) (driver.ObjectInfo, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.object == nil {
				return driver.ObjectInfo{}, &driver.Error{Op: "head", Kind: driver.ErrNotExist}
			}
			return driver.ObjectInfo{Size: int64(len(f.object)), Metadata: maps.Clone(f.meta)}, nil
		},
		Log: slog.New(slog.DiscardHandler),
	}
}

func newFake() *fake { return &fake{sends: map[int]int{}, failSend: map[int]int{}} }

// stream hides every method of a reader but Read: a body of unknown shape.
type stream struct{ r io.Reader }

func (s stream) Read(p []byte) (int, error) { return s.r.Read(p) }

func body(n int) []byte { return bytes.Repeat([]byte("0123456789"), n/10+1)[:n] }

func TestSingleOrParts(t *testing.T) {
	for _, tc := range []struct {
		name          string
		size          int64 // announced; 0 unknown
		n             int   // bytes
		singles, runs int
	}{
		{"known, within the single limit", 90, 90, 1, 0},
		{"known, below the part size", 150, 150, 1, 0},
		{"known, in parts", 1000, 1000, 0, 1},
		{"unknown, within one part", 0, 150, 1, 0},
		{"unknown, in parts", 0, 1000, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			data := body(tc.n)
			if _, err := Put(t.Context(), "k", stream{bytes.NewReader(data)}, &driver.PutOptions{Size: tc.size}, f.backend(200, 2)); err != nil {
				t.Fatal(err)
			}
			if f.singles != tc.singles || f.starts != tc.runs || !bytes.Equal(f.object, data) {
				t.Errorf("singles %d, uploads in parts %d, object %d bytes; want %d, %d, %d", f.singles, f.starts, len(f.object), tc.singles, tc.runs, tc.n)
			}
			if tc.runs > 0 && f.meta[driver.MetaPutID] == "" {
				t.Error("an upload in parts carries no put-id")
			}
		})
	}
}

// TestBoundedAndInPlace: no more than Concurrency parts are in flight; a body that is an
// io.ReaderAt of known size is sent as sections of itself, a stream through buffers.
func TestBoundedAndInPlace(t *testing.T) {
	data := body(5000)
	for _, inPlace := range []bool{true, false} {
		f := newFake()
		var r io.Reader = bytes.NewReader(data)
		if !inPlace {
			r = stream{r}
		}
		if _, err := Put(t.Context(), "k", r, &driver.PutOptions{Size: int64(len(data))}, f.backend(200, 3)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(f.object, data) || f.maxIn.Load() > 3 || f.maxIn.Load() < 2 {
			t.Errorf("in place %v: %d bytes, at most %d parts in flight; want %d bytes, 2 or 3", inPlace, len(f.object), f.maxIn.Load(), len(data))
		}
		if got := f.inPlace.Load() == 25; got != inPlace {
			t.Errorf("in place %v: %d of 25 parts sent as sections of the body", inPlace, f.inPlace.Load())
		}
	}
}

// TestPartRetriedAlone: a transport fault on one part resends that part only.
func TestPartRetriedAlone(t *testing.T) {
	f := newFake()
	f.failSend[2] = 2
	data := body(1000)
	if _, err := Put(t.Context(), "k", stream{bytes.NewReader(data)}, &driver.PutOptions{Size: 1000}, f.backend(200, 2)); err != nil {
		t.Fatal(err)
	}
	if f.sends[1] != 1 || f.sends[2] != 3 || f.sends[5] != 1 || f.starts != 1 || f.commits != 1 || !bytes.Equal(f.object, data) {
		t.Errorf("sends %v, starts %d, commits %d", f.sends, f.starts, f.commits)
	}
}

// TestShortBodyCommitsNothing: a body that ends before its announced size fails the put,
// naming the key; the upload is aborted, never committed.
func TestShortBodyCommitsNothing(t *testing.T) {
	f := newFake()
	_, err := Put(t.Context(), "logs/k", stream{bytes.NewReader(body(700))}, &driver.PutOptions{Size: 1000}, f.backend(200, 2))
	if !errors.Is(err, driver.ErrUnavailable) || !strings.Contains(err.Error(), "logs/k") || driver.FaultOf(err) != driver.FaultNone {
		t.Fatalf("err = %v, want ErrUnavailable naming the key, without a fault", err)
	}
	if f.commits != 0 || f.aborts != 1 || f.object != nil {
		t.Errorf("commits %d, aborts %d, object %v", f.commits, f.aborts, f.object != nil)
	}
}

// TestLostCommitAnswers: a commit whose answer is lost after it applied succeeds by its
// put-id; one lost before it applied is sent again when unconditional, and is outcome-unknown
// (with the put-id) when conditional, aborted, never resent.
func TestLostCommitAnswers(t *testing.T) {
	data := body(1000)
	put := func(f *fake, opts *driver.PutOptions) (driver.ObjectInfo, error) {
		opts.Size = 1000
		return Put(t.Context(), "k", stream{bytes.NewReader(data)}, opts, f.backend(200, 2))
	}
	f := newFake()
	f.lostCommit = 1
	if _, err := put(f, &driver.PutOptions{IfNoneMatch: true}); err != nil || f.commits != 1 {
		t.Errorf("lost after it applied: %v, %d commits; want success after 1", err, f.commits)
	}
	f = newFake()
	f.failCommit = 1
	if _, err := put(f, &driver.PutOptions{}); err != nil || f.commits != 2 || !bytes.Equal(f.object, data) {
		t.Errorf("unconditional, lost before it applied: %v, %d commits; want success after 2", err, f.commits)
	}
	f = newFake()
	f.failCommit = 1
	_, err := put(f, &driver.PutOptions{IfNoneMatch: true})
	var e *driver.Error
	if !errors.Is(err, driver.ErrOutcomeUnknown) || !errors.As(err, &e) || e.PutID == "" || f.commits != 1 || f.aborts != 1 {
		t.Errorf("conditional, lost before it applied: %v, %d commits, %d aborts; want outcome unknown with a put-id, 1 and 1", err, f.commits, f.aborts)
	}
}

// TestCancelledAborts: a cancelled put returns the context's error and aborts the upload.
func TestCancelledAborts(t *testing.T) {
	f := newFake()
	ctx, cancel := context.WithCancel(t.Context())
	r := io.MultiReader(bytes.NewReader(body(500)), readFunc(func([]byte) (int, error) { cancel(); return 0, ctx.Err() }))
	_, err := Put(ctx, "k", r, &driver.PutOptions{Size: 1000}, f.backend(200, 2))
	if !errors.Is(err, context.Canceled) || f.commits != 0 || f.aborts != 1 {
		t.Errorf("err %v, commits %d, aborts %d; want context.Canceled, 0, 1", err, f.commits, f.aborts)
	}
}

type readFunc func([]byte) (int, error)

func (f readFunc) Read(p []byte) (int, error) { return f(p) }

// TestChecksumOfWhatIsSent: whatever the body, the backend is given the CRC-32C of the bytes
// it stores: with the single request, and at the commit of parts sent at once, each part
// with its own (fakeParts.Send checks it).
func TestChecksumOfWhatIsSent(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 1000) // 16,000 bytes
	bodies := map[string]func(b []byte) (io.Reader, int64){
		"in place":        func(b []byte) (io.Reader, int64) { return bytes.NewReader(b), int64(len(b)) },
		"stream, known":   func(b []byte) (io.Reader, int64) { return io.MultiReader(bytes.NewReader(b)), int64(len(b)) },
		"stream, unknown": func(b []byte) (io.Reader, int64) { return io.MultiReader(bytes.NewReader(b)), -1 },
	}
	for name, body := range bodies {
		for _, n := range []int{0, 1, 99, 100, 101, 4096, len(data)} {
			f := &fake{sends: map[int]int{}}
			r, size := body(data[:n])
			_, err := Put(context.Background(), "k", r, &driver.PutOptions{Size: size}, f.backend(1000, 3))
			if err != nil {
				t.Fatalf("%s, %d bytes: %v", name, n, err)
			}
			if !bytes.Equal(f.object, data[:n]) {
				t.Fatalf("%s, %d bytes: stored %d bytes", name, n, len(f.object))
			}
			if want := crc32c.Format(crc32c.Sum(data[:n])); f.crc != want {
				t.Errorf("%s, %d bytes (%d singles, %d commits): backend given CRC-32C %q, the bytes have %s",
					name, n, f.singles, f.commits, f.crc, want)
			}
		}
	}
}

// TestSingleRefusesABodyThatDoesNotEnd: a body that goes on past the size given is refused,
// not cut short (its reader's error at the end, a checksum's, is never skipped).
func TestSingleRefusesABodyThatDoesNotEnd(t *testing.T) {
	f := &fake{sends: map[int]int{}}
	_, err := Put(context.Background(), "k", io.MultiReader(strings.NewReader("12345")), &driver.PutOptions{Size: 4}, f.backend(1000, 1))
	if err == nil || f.singles != 0 {
		t.Fatalf("a 5-byte body put as 4: err %v, %d singles sent", err, f.singles)
	}
}
