package ship

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/mem"
)

// A code of each class, for these tests only: ship has never heard of them, so what it does
// with them can only come from their class.
var (
	testTransient = testCode("WHARF_TEST_SHIP_TRANSIENT", errcode.Transient)
	testPoison    = testCode("WHARF_TEST_SHIP_POISON", errcode.Poison)
	testOperator  = testCode("WHARF_TEST_SHIP_OPERATOR", errcode.Operator)
	testFatal     = testCode("WHARF_TEST_SHIP_FATAL", errcode.Fatal)
)

func testCode(name string, c errcode.Class) *errcode.Code {
	return errcode.New(errcode.Def{Name: name, Text: strings.ToLower(name), Exit: errcode.ExitFailed, Class: c,
		Section: "Test", Meaning: "only in ship's tests"})
}

// refusing fails every put of a file (under wharf/) with an error of kind, while kind is set.
type refusing struct {
	driver.Bucket
	kind    atomic.Pointer[errcode.Code]
	refused atomic.Int64
}

func (r *refusing) Unwrap() driver.Bucket { return r.Bucket }

func (r *refusing) Put(ctx context.Context, key string, body io.Reader, opts *store.PutOptions) (store.ObjectInfo, error) {
	if k := r.kind.Load(); k != nil && strings.HasPrefix(key, KeyRoot) {
		r.refused.Add(1)
		return store.ObjectInfo{}, &store.Error{Op: "put", Key: key, Kind: k, Err: errors.New("injected")}
	}
	return r.Bucket.Put(ctx, key, body, opts)
}

// TestShipTakesItsDecisionFromTheClass: a failed upload is retried, counted toward an
// unhealthy /healthz, or stops the service as its code's class says (errcode.ClassOf), for
// codes ship lists nowhere.
func TestShipTakesItsDecisionFromTheClass(t *testing.T) {
	for _, tc := range []struct {
		kind   *errcode.Code
		health string // once several attempts failed
	}{
		{testTransient, HealthOK},
		{testPoison, HealthOK},
		{testOperator, HealthUnhealthy},
		// WHARF_CREDENTIALS_MISSING is of class operator: before the classes, ship retried it
		// without counting it toward an unhealthy /healthz, unlike WHARF_ROLE_UNAVAILABLE.
		{driver.ErrNoCredentials, HealthUnhealthy},
	} {
		t.Run(tc.kind.Name(), func(t *testing.T) {
			fx := newFixture(t, 10)
			r := &refusing{Bucket: mem.New()}
			r.kind.Store(tc.kind)
			cfg := fx.config("mem://x")
			s, wait := start(t, t.Context(), cfg, options(t, store.New(r, nil)))
			eventually(t, "retries", func() bool { return r.refused.Load() > unhealthyAfter })
			st := s.Status()
			if st.State != StateRetrying || st.Health != tc.health || st.LastError == nil || st.LastError.Code != tc.kind.Name() {
				t.Errorf("after %d refused uploads of class %v: state %s, health %s, last error %+v; want retrying, %s",
					r.refused.Load(), tc.kind.Class(), st.State, st.Health, st.LastError, tc.health)
			}
			r.kind.Store(nil)
			if err := wait(); err != nil {
				t.Fatal(err)
			}
			fx.checkShipped(t, store.New(r.Bucket, nil), cfg)
			if h := s.Status().Health; h != HealthOK {
				t.Errorf("health %s once the file shipped, want ok", h)
			}
		})
	}
	t.Run("fatal", func(t *testing.T) {
		fx := newFixture(t, 10)
		r := &refusing{Bucket: mem.New()}
		r.kind.Store(testFatal)
		s, err := runToEnd(t, fx.config("mem://x"), options(t, store.New(r, nil)))
		if !errors.Is(err, testFatal) {
			t.Fatalf("Run = %v, want the fatal code's error", err)
		}
		if st := s.Status(); st.State != StateFatal || st.Health != HealthFatal || r.refused.Load() != 1 {
			t.Errorf("state %s, health %s after %d attempts; want fatal after 1", st.State, st.Health, r.refused.Load())
		}
	})
}
