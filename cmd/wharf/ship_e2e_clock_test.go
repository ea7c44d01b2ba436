package main

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/ship"
)

// skewCLI is c with the wharftest hook that signs every S3 request (or the first n) with a
// clock d off.
func skewCLI(c cli, spec string) cli {
	c.env = append(append([]string(nil), c.env...), "WHARF_TEST_S3_SIGN_SKEW="+spec)
	return c
}

// waitLog waits (30 s at most) until the service's stderr holds s at least n times.
func (s *shipService) waitLog(what string, n int) {
	s.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if strings.Count(s.err.String(), what) >= n {
			return
		}
		if s.hasExited() {
			break
		}
	}
	s.t.Fatalf("stderr did not show %q %d times\nlast of stderr: %s", what, n, lastLines(s.err.String(), 10))
}

// TestE2EShipClockSkew: MinIO refuses requests signed 30 minutes behind its clock
// (RequestTimeTooSkewed). That is a clock to sync, not refused credentials: the service
// reports WHARF_CLOCK_SKEWED (not WHARF_FORBIDDEN), keeps retrying, and /healthz stays 200
// (saying it is degraded) however many attempts fail in a row; /status and a warning name
// the skew the store's answer showed; once requests are signed right, the files ship.
func TestE2EShipClockSkew(t *testing.T) {
	d := minioShipDest(t)
	sp := newShipSpool(t, rand.New(rand.NewPCG(21, 8)), []int{100, 200})
	s := startShip(t, skewCLI(d.c, "-30m"), d.shipArgs(sp, "--retry-max", "100ms")...)
	s.waitLog("code=WHARF_CLOCK_SKEWED", 5) // more attempts in a row than make the service unhealthy
	st, _ := s.status()
	if st.Health != ship.HealthOK || st.State != ship.StateProbing || st.LastError == nil || st.LastError.Code != "WHARF_CLOCK_SKEWED" {
		t.Errorf("/status: health %s, state %s, last_error %+v; want ok, probing, WHARF_CLOCK_SKEWED", st.Health, st.State, st.LastError)
	}
	if st.LastError != nil && math.Abs(st.LastError.ClockSkewSeconds-1800) > 120 {
		t.Errorf("/status last_error.clock_skew_seconds = %v, want about 1800 (the store 30 min ahead)", st.LastError.ClockSkewSeconds)
	}
	code, body, err := s.get("/healthz")
	if err != nil || code != 200 || !strings.HasPrefix(body, "ok: probing; degraded: ") || !strings.Contains(body, "[WHARF_CLOCK_SKEWED]") {
		t.Errorf("/healthz: %d %q (%v); want 200 ok: probing; degraded … [WHARF_CLOCK_SKEWED]", code, body, err)
	}
	checkBacklog(t, s, st, 2)
	if code := s.stop(); code != 0 {
		t.Errorf("SIGTERM: exit %d, want 0", code)
	}
	logs := s.err.String()
	for _, want := range []string{`msg="clock skew"`, "clock_skew_seconds=1800", "sync this machine's clock", "30m0s behind the store's"} {
		if !strings.Contains(logs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, lastLines(logs, 10))
		}
	}
	if strings.Contains(logs, "WHARF_FORBIDDEN") || strings.Contains(logs, "access denied") {
		t.Errorf("a clock skew reported as refused access:\n%s", lastLines(logs, 10))
	}

	// The first 6 requests signed 30 minutes off (the probe's and the uploads' in overwrite
	// mode), then right: the same run retries through them and ships everything.
	r := skewCLI(d.c, "-30m:6").run(t, d.shipArgs(sp, "--drain", "--retention", "keep", "--conditional-put", "overwrite")...)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0 once the clock is right\nstderr: %s", r.code, r.err)
	}
	if !strings.Contains(r.err, "WHARF_CLOCK_SKEWED") {
		t.Errorf("stderr shows no refused request: the hook did not skew\n%s", r.err)
	}
	d.checkShipped(t, sp, true)
}
