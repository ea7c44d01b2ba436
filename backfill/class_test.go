package backfill

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
)

// A code of each class, for these tests only: backfill has never heard of them, so what it
// does with them can only come from their class.
var (
	testTransient = testCode("WHARF_TEST_BACKFILL_TRANSIENT", errcode.Transient)
	testPoison    = testCode("WHARF_TEST_BACKFILL_POISON", errcode.Poison)
	testOperator  = testCode("WHARF_TEST_BACKFILL_OPERATOR", errcode.Operator)
	testFatal     = testCode("WHARF_TEST_BACKFILL_FATAL", errcode.Fatal)
)

func testCode(name string, c errcode.Class) *errcode.Code {
	return errcode.New(errcode.Def{Name: name, Text: strings.ToLower(name), Exit: errcode.ExitFailed, Class: c,
		Section: "Test", Meaning: "only in backfill's tests"})
}

// failGets fails the Gets of key with an error of kind: the first times of them, or every one
// when times is 0.
type failGets struct {
	driver.Bucket
	key   string
	kind  *errcode.Code
	times int
	mu    sync.Mutex
	n     int
}

func (f *failGets) Unwrap() driver.Bucket { return f.Bucket }

func (f *failGets) Get(ctx context.Context, key string, opts *driver.GetOptions) (*driver.Object, error) {
	f.mu.Lock()
	fail := key == f.key && (f.times == 0 || f.n < f.times)
	if fail {
		f.n++
	}
	f.mu.Unlock()
	if fail {
		return nil, &driver.Error{Op: "get", Key: key, Kind: f.kind, Err: errors.New("injected")}
	}
	return f.Bucket.Get(ctx, key, opts)
}

// TestBackfillTakesItsDecisionFromTheClass: a failed read of one object is retried against
// the object's attempts, quarantines the object, or stops the job as the class of its code
// says (errcode.ClassOf), for codes backfill lists nowhere.
func TestBackfillTakesItsDecisionFromTheClass(t *testing.T) {
	const bad = "logs/obj-00001.ndjson"
	for _, tc := range []struct {
		kind   *errcode.Code
		times  int    // failed Gets of bad; 0: every one
		reason string // the reason each failure is counted under; "" when the job stops
	}{
		{testTransient, 1, ReasonUnreadable},
		// WHARF_CLOCK_SKEWED is of class transient: before the classes, backfill stopped the
		// job at once on it, as on a refused credential.
		{store.ErrClockSkewed, 1, ReasonUnreadable},
		{testPoison, 0, ReasonCorrupt},
		{testOperator, 0, ""},
		{testFatal, 0, ""},
	} {
		t.Run(tc.kind.Name(), func(t *testing.T) {
			src := memStore()
			all := fill(t, src, "logs/", 3, 10, "plain")
			fg := &failGets{Bucket: src.Bucket(), key: bad, kind: tc.kind, times: tc.times}
			cfg := testConfig("mem://src/logs/", "-")
			var out syncBuffer
			j, err := runJob(context.Background(), t, cfg, NewSolo(), store.New(fg, nil), NewStdout(&out, cfg.CommitInterval), false)
			failed := func(reason string) float64 { return testutil.ToFloat64(j.m.failed.WithLabelValues(reason)) }
			switch {
			case tc.reason == "":
				if !errors.Is(err, tc.kind) || errors.Is(err, ErrQuarantined) || errors.Is(err, ErrObject) {
					t.Fatalf("Run = %v, want the %v error at once", err, tc.kind.Class())
				}
			case tc.times == 0:
				if !errors.Is(err, ErrQuarantined) || !strings.Contains(err.Error(), bad+" ("+tc.reason) {
					t.Fatalf("Run = %v, want %s quarantined (%s)", err, bad, tc.reason)
				}
				if got := failed(tc.reason); got != float64(cfg.MaxAttempts) {
					t.Errorf("objects_failed_total{reason=%s} = %v, want %d", tc.reason, got, cfg.MaxAttempts)
				}
			default:
				if err != nil {
					t.Fatalf("Run = %v, want the job done after retrying %s", err, bad)
				}
				if got := failed(tc.reason); got != float64(tc.times) {
					t.Errorf("objects_failed_total{reason=%s} = %v, want %d", tc.reason, got, tc.times)
				}
				all.check(t, out.Bytes(), true)
			}
		})
	}
}
