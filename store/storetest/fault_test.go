package storetest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/mem"
)

// faulty returns a store over a Faulty mem store, and the Faulty layer.
func faulty(t *testing.T, rules ...Rule) (*store.Store, *FaultyBucket, *mem.Store) {
	t.Helper()
	m := mem.New()
	f := Faulty(m, rules...)
	return wrap(f), f, m
}

func wantAttempts(t *testing.T, f *FaultyBucket, op string, want int) {
	t.Helper()
	if got := f.Calls(op); got != want {
		t.Errorf("%s: %d calls reached the store, want %d", op, got, want)
	}
}

func TestRetryTransientTransportFaults(t *testing.T) {
	s, f, _ := faulty(t, Rule{Op: "head", Fault: driver.FaultTransport, Times: 2})
	putBytes(t, s, "k", []byte("v"), nil)
	if info := mustHead(t, s, "k"); info.Size != 1 {
		t.Errorf("head after two transport faults: Size %d, want 1", info.Size)
	}
	wantAttempts(t, f, "head", 3)
	if f.Faults("head") != 2 || f.Faults("") != 2 {
		t.Errorf("faults: head %d, all %d; want 2 and 2", f.Faults("head"), f.Faults(""))
	}
}

func TestRetryTransportGivesUp(t *testing.T) {
	s, f, _ := faulty(t, Rule{Op: "list", Fault: driver.FaultTransport})
	_, err := s.List(t.Context(), &store.ListOptions{Prefix: "p/"})
	wantKind(t, err, store.ErrUnavailable, "list under constant transport faults")
	wantAttempts(t, f, "list", store.DefaultRetryPolicy().TransportAttempts)
	var e *store.Error
	if errors.As(err, &e) && (e.Op != "list" || e.Key != "p/" || e.Attempts != 3) {
		t.Errorf("gave up with op %q key %q attempts %d; want list, p/, 3", e.Op, e.Key, e.Attempts)
	}
	if !errors.Is(err, ErrInjected) {
		t.Errorf("the final error %v lost its cause", err)
	}
}

func TestRetryThrottling(t *testing.T) {
	s, f, _ := faulty(t,
		Rule{Op: "delete", Fault: driver.FaultThrottled, Status: 503, Times: 4},
		Rule{Op: "get", Fault: driver.FaultThrottled, Status: 429})
	putBytes(t, s, "k", []byte("v"), nil)
	if err := s.Delete(t.Context(), "k", nil); err != nil {
		t.Fatalf("delete after four 503s: %v", err)
	}
	wantAttempts(t, f, "delete", 5)
	_, err := s.Get(t.Context(), "k", nil)
	wantKind(t, err, store.ErrUnavailable, "get under constant 429s")
	wantAttempts(t, f, "get", store.DefaultRetryPolicy().ThrottleAttempts)
}

// TestRetryUnconditionalPutRewinds: a put whose body was consumed by a failed attempt is sent
// again from the start when the body can seek, and not retried when it cannot.
func TestRetryUnconditionalPutRewinds(t *testing.T) {
	s, f, _ := faulty(t, Rule{Op: "put", Fault: driver.FaultThrottled, Status: 500, Times: 1})
	putBytes(t, s, "k", []byte("whole body"), nil)
	wantAttempts(t, f, "put", 2)
	wantContent(t, s, "k", []byte("whole body"), "put retried after a 500")

	s, f, _ = faulty(t, Rule{Op: "put", Fault: driver.FaultTransport, Times: 1})
	_, err := s.Put(t.Context(), "k", onlyReader{bytes.NewReader([]byte("stream"))}, &store.PutOptions{Size: -1})
	wantKind(t, err, store.ErrUnavailable, "put of a stream after a transport fault")
	wantAttempts(t, f, "put", 1)
	wantAbsent(t, s, "k", "after a failed stream put")
}

// TestRetryConditionalPutOutcomeUnknown: a conditional put is attempted once on a transport
// fault or a 500 and returns ErrOutcomeUnknown with its put-id, which ResolvePut settles.
func TestRetryConditionalPutOutcomeUnknown(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rule   Rule
		landed bool
	}{
		{"transport-before", Rule{Op: "put", Fault: driver.FaultTransport, Times: 1}, false},
		{"transport-lost-answer", Rule{Op: "put", Fault: driver.FaultTransport, Times: 1, AfterApply: true}, true},
		{"500-lost-answer", Rule{Op: "put", Fault: driver.FaultThrottled, Status: 500, Times: 1, AfterApply: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, f, _ := faulty(t, tc.rule)
			_, err := tryPut(t, s, "lease", []byte("mine"), &store.PutOptions{IfNoneMatch: true})
			wantKind(t, err, store.ErrOutcomeUnknown, "conditional put whose answer was lost")
			wantAttempts(t, f, "put", 1)
			var e *store.Error
			if !errors.As(err, &e) || e.PutID == "" {
				t.Fatalf("outcome-unknown error %v carries no PutID", err)
			}
			info, landed, err := s.ResolvePut(t.Context(), "lease", e.PutID)
			if err != nil || landed != tc.landed {
				t.Fatalf("ResolvePut: landed %v, err %v; want landed %v", landed, err, tc.landed)
			}
			if landed && info.Size != 4 {
				t.Errorf("ResolvePut: Size %d, want 4", info.Size)
			}
			// A resend of the same create is refused: the object (ours or none) stays.
			_, err = tryPut(t, s, "lease", []byte("again"), &store.PutOptions{IfNoneMatch: true})
			if tc.landed {
				wantKind(t, err, store.ErrPreconditionFailed, "resend after the first landed")
			} else if err != nil {
				t.Errorf("resend after the first did not land: %v", err)
			}
		})
	}
}

// TestRetryResumesBrokenBody: a get whose body breaks mid-stream resumes with a ranged get
// pinned to the ETag, and the reader sees every byte once.
func TestRetryResumesBrokenBody(t *testing.T) {
	s, f, _ := faulty(t, Rule{Op: "get", Fault: driver.FaultTransport, Times: 1, Body: true, BodyAfter: 1000})
	data := randomBytes(5000, 9)
	putBytes(t, s, "k", data, nil)
	got, _ := getBytes(t, s, "k", nil)
	if !bytes.Equal(got, data) {
		t.Errorf("resumed read: %d bytes, want %d identical bytes", len(got), len(data))
	}
	wantAttempts(t, f, "get", 2)
}

// TestRetryStopsOnCancel: a cancelled context ends the retries with the context's error.
func TestRetryStopsOnCancel(t *testing.T) {
	m := mem.New()
	ctx, cancel := context.WithCancel(t.Context())
	f := Faulty(m, Rule{Op: "head", Fault: driver.FaultThrottled, Status: 503})
	p := quickPolicy()
	p.Sleep = func(context.Context, time.Duration) error { cancel(); return ctx.Err() }
	s := store.New(f, p)
	_, err := s.Head(ctx, "k")
	if !errors.Is(err, context.Canceled) || errcode.NameOf(err) != "" {
		t.Errorf("head cancelled during backoff: %v, want the bare context.Canceled", err)
	}
	wantAttempts(t, f, "head", 1)
}

// TestFaultyRules checks Skip, Times, Key matching and AfterApply on the wrapper alone.
func TestFaultyRules(t *testing.T) {
	m := mem.New()
	f := Faulty(m,
		Rule{Op: "put", Key: "b", Skip: 1, Times: 2, Fault: driver.FaultTransport},
		Rule{Op: "delete", AfterApply: true, Fault: driver.FaultThrottled, Status: 503})
	ctx := t.Context()
	put := func(key string) error {
		_, err := f.Put(ctx, key, bytes.NewReader([]byte(key)), &store.PutOptions{Size: 1})
		return err
	}
	var got []bool
	for _, key := range []string{"a", "b", "b", "b", "b", "a"} {
		got = append(got, put(key) != nil)
	}
	want := []bool{false, false, true, true, false, false}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("put failures %v, want %v", got, want)
		}
	}
	if f.Calls("put") != 6 || f.Faults("put") != 2 {
		t.Errorf("put calls %d faults %d, want 6 and 2", f.Calls("put"), f.Faults("put"))
	}
	err := f.Delete(ctx, "a", &driver.DeleteOptions{})
	if driver.FaultOf(err) != driver.FaultThrottled || !errors.Is(err, ErrInjected) {
		t.Errorf("delete: %v, want an injected throttling fault", err)
	}
	if _, err := m.Head(ctx, "a"); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("AfterApply delete did not reach the store: head says %v", err)
	}
	obj, err := f.Get(ctx, "b", &driver.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	if b, _ := io.ReadAll(obj); string(b) != "b" {
		t.Errorf("get b: %q", b)
	}
	if _, ok := driver.Find[driver.Copier](f); !ok {
		t.Errorf("driver.Find finds no Copier through the decorator")
	}
}
