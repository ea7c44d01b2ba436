package s3

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/store/driver"
)

// startSource starts the fake of the named source ("ecs", "sts", "imds").
func startSource(t *testing.T, f *roleFake) {
	switch f.name {
	case "ecs":
		startECS(t, f)
	case "sts":
		startSTS(t, f)
	case "imds":
		startIMDS(t, f, http.StatusOK)
	default:
		t.Fatalf("no source %q", f.name)
	}
}

// For each source: keys expiring in 10 minutes are kept until 300 s before expiry, then
// refreshed and the new keys sign; a refresh that fails while the keys are valid keeps them
// and the next request tries again; once expired, with the source failing, a request fails
// with ErrRoleUnavailable and nothing is signed with the expired keys.
func TestRoleRefreshAndExpiry(t *testing.T) {
	for _, name := range []string{"ecs", "sts", "imds"} {
		t.Run(name, func(t *testing.T) {
			noRoleEnv(t)
			clk := newClock()
			src := &roleFake{name: name, clk: clk, ttl: 10 * time.Minute}
			startSource(t, src)
			rs := openRole(t, clk)
			fetches := func(want int) {
				t.Helper()
				if got := src.count(); got != want {
					t.Fatalf("%d fetches at the source, want %d", got, want)
				}
			}

			rs.mustSign(t, name, 1)
			fetches(1)
			clk.advance(4 * time.Minute) // 6 min left: outside the window
			rs.mustSign(t, name, 1)
			fetches(1)
			clk.advance(time.Minute + time.Second) // 4m59s left: inside the window
			rs.mustSign(t, name, 2)
			fetches(2)

			// Keys 2 expire 10 min from now; enter their window with the source down.
			src.set(func(f *roleFake) { f.fail = true })
			clk.advance(5*time.Minute + time.Second)
			rs.mustSign(t, name, 2) // still valid: kept
			fetches(3)
			rs.mustSign(t, name, 2) // the next request tries the source again
			fetches(4)
			if !strings.Contains(rs.logs.String(), "refresh failed") {
				t.Errorf("no warning logged for the failed refresh: %s", rs.logs.String())
			}
			src.set(func(f *roleFake) { f.fail = false })
			rs.mustSign(t, name, 3)
			fetches(5)

			// Keys 3 expire; the source is down: nothing is signed with them.
			src.set(func(f *roleFake) { f.fail = true })
			clk.advance(10 * time.Minute)
			before := rs.s3.total()
			_, err := rs.b.Head(t.Context(), "k")
			if !errors.Is(err, driver.ErrRoleUnavailable) {
				t.Fatalf("err = %v, want ErrRoleUnavailable after expiry", err)
			}
			if n := rs.s3.total() - before; n != 0 {
				t.Fatalf("%d requests sent with expired keys", n)
			}
			fetches(6)
			for _, want := range []string{"expired at " + clk.now().Format(time.RFC3339), sourceECS, sourceWebIdentity, sourceIMDS} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not say %q: %v", want, err)
				}
			}
			_, err2 := rs.b.Head(t.Context(), "k") // and again: the source is asked each time
			if !errors.Is(err2, driver.ErrRoleUnavailable) || rs.s3.total() != before {
				t.Fatalf("second request after expiry: err = %v, %d sent", err2, rs.s3.total()-before)
			}
			fetches(7)
			src.set(func(f *roleFake) { f.fail = false })
			rs.mustSign(t, name, 4)

			want := []string{keysOf(name, 1).id, keysOf(name, 1).id, keysOf(name, 2).id, keysOf(name, 2).id,
				keysOf(name, 2).id, keysOf(name, 3).id, keysOf(name, 4).id}
			if got := rs.s3.signers(); !slices.Equal(got, want) {
				t.Errorf("S3 saw requests signed by %v, want %v", got, want)
			}
			secrets := src.secrets()
			noSecrets(t, "error", err.Error(), secrets)
			noSecrets(t, "log", rs.logs.String(), secrets)
		})
	}
}

// A refresh asks only the source the valid keys came from: a failing container endpoint does
// not swap in the instance role while its keys are valid. Once they expire, every source is
// tried again in order.
func TestRoleRefreshStaysWithSource(t *testing.T) {
	noRoleEnv(t)
	clk := newClock()
	ecs := &roleFake{name: "ecs", clk: clk, ttl: 10 * time.Minute}
	md := &roleFake{name: "imds", clk: clk, ttl: time.Hour}
	startECS(t, ecs)
	startIMDS(t, md, http.StatusOK)
	rs := openRole(t, clk)
	rs.mustSign(t, "ecs", 1)
	ecs.set(func(f *roleFake) { f.fail = true })
	clk.advance(6 * time.Minute)
	rs.mustSign(t, "ecs", 1)
	if md.count() != 0 || ecs.count() != 2 {
		t.Fatalf("fetches: ecs %d, imds %d; want 2 and 0", ecs.count(), md.count())
	}
	clk.advance(4 * time.Minute) // the container keys expire
	rs.mustSign(t, "imds", 1)
	if ecs.count() != 3 {
		t.Errorf("ecs fetches = %d, want 3 (asked first after expiry)", ecs.count())
	}
}

// While one request refreshes, the others sign with the still-valid keys without waiting;
// without valid keys, concurrent requests share one fetch.
func TestRoleConcurrentRefresh(t *testing.T) {
	noRoleEnv(t)
	clk := newClock()
	ecs := &roleFake{name: "ecs", clk: clk, ttl: 10 * time.Minute, block: make(chan struct{})}
	startECS(t, ecs)
	rs := openRole(t, clk)

	errs := make(chan error, 4)
	for range 4 {
		go func() { _, err := rs.b.Head(t.Context(), "k"); errs <- err }()
	}
	waitFor(t, func() bool { return ecs.count() == 1 })
	release := func() {
		ecs.mu.Lock()
		close(ecs.block)
		ecs.block = make(chan struct{})
		ecs.mu.Unlock()
	}
	release()
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if ecs.count() != 1 {
		t.Fatalf("%d fetches for 4 concurrent first requests, want 1", ecs.count())
	}

	clk.advance(6 * time.Minute)
	go func() { _, err := rs.b.Head(t.Context(), "k"); errs <- err }()
	waitFor(t, func() bool { return ecs.count() == 2 })
	rs.mustSign(t, "ecs", 1) // does not wait for the refresh in flight
	if ecs.count() != 2 {
		t.Fatalf("%d fetches, want 2 (one refresh in flight)", ecs.count())
	}
	release()
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	rs.mustSign(t, "ecs", 2)
}

// Keys that arrive already inside the window are not refreshed at every request: the next
// refresh is halfway to their expiry.
func TestRoleShortLivedKeys(t *testing.T) {
	noRoleEnv(t)
	clk := newClock()
	ecs := &roleFake{name: "ecs", clk: clk, ttl: 2 * time.Minute}
	startECS(t, ecs)
	rs := openRole(t, clk)
	rs.mustSign(t, "ecs", 1)
	rs.mustSign(t, "ecs", 1)
	clk.advance(59 * time.Second)
	rs.mustSign(t, "ecs", 1)
	clk.advance(time.Second)
	rs.mustSign(t, "ecs", 2)
	if ecs.count() != 2 {
		t.Errorf("%d fetches, want 2", ecs.count())
	}
}

// A source answering with keys already expired has not answered.
func TestRoleKeysExpiredOnArrival(t *testing.T) {
	noRoleEnv(t)
	clk := newClock()
	ecs := &roleFake{name: "ecs", clk: clk, ttl: -time.Second}
	startECS(t, ecs)
	rs := openRole(t, clk)
	_, err := rs.head(t)
	if !errors.Is(err, driver.ErrRoleUnavailable) || !strings.Contains(err.Error(), "answered with keys that expired") {
		t.Fatalf("err = %v, want ErrRoleUnavailable saying the keys had expired", err)
	}
	if rs.s3.total() != 0 {
		t.Errorf("%d requests sent with expired keys", rs.s3.total())
	}
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 5 s")
		}
	}
}

// A source that does not answer within the per-source timeout is passed over.
func TestRoleSourceTimeout(t *testing.T) {
	noRoleEnv(t)
	clk := newClock()
	ecs := &roleFake{name: "ecs", clk: clk, ttl: time.Hour, block: make(chan struct{})}
	md := &roleFake{name: "imds", clk: clk, ttl: time.Hour}
	startECS(t, ecs)
	startIMDS(t, md, http.StatusOK)
	rs := openRole(t, clk)
	rs.p.timeout = 200 * time.Millisecond
	start := time.Now()
	rs.mustSign(t, "imds", 1)
	if ecs.count() != 1 {
		t.Errorf("ecs fetches = %d, want 1", ecs.count())
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v with a 200ms per-source timeout", d)
	}
}

// A caller whose ctx ends stops waiting for a refresh; its error is the ctx's, not the role's.
func TestRoleWaitEndsWithContext(t *testing.T) {
	noRoleEnv(t)
	ecs := &roleFake{name: "ecs", clk: newClock(), ttl: time.Hour, block: make(chan struct{})}
	startECS(t, ecs)
	rs := openRole(t, ecs.clk)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := rs.b.Head(ctx, "k")
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, driver.ErrRoleUnavailable) {
		t.Fatalf("err = %v, want the ctx's deadline", err)
	}
	if rs.s3.total() != 0 {
		t.Errorf("%d requests sent", rs.s3.total())
	}
}
