package ship

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/internal/statuspage"
	"github.com/wharfdata/wharf/internal/textfmt"
)

// page is the status page of the service now: Status laid out, with the chart of the bytes
// shipped over the last five minutes.
func (s *Shipper) page(context.Context) statuspage.Page {
	st := s.Status()
	now := s.now()
	p := statuspage.Page{Component: "ship", Name: st.Node, State: st.State, Health: st.Health, Generated: now}
	if code, line := s.health(); code != http.StatusOK || strings.Contains(line, "degraded") {
		p.Reason = line
	}
	if p.Health == HealthOK && p.Reason != "" {
		p.Health = "degraded"
	}
	p.Sections = append(p.Sections,
		statuspage.Section{Title: "Backlog", Facts: []statuspage.Fact{
			statuspage.F("backlog_files", "files waiting", st.Backlog.Files),
			statuspage.F("backlog_bytes", "bytes waiting", sized(st.Backlog.Bytes)),
			statuspage.F("backlog_oldest_age", "oldest waiting", age(st.Backlog.OldestAge)),
			statuspage.F("backlog_oldest", "oldest file's time", textfmt.Time(st.Backlog.Oldest)),
			statuspage.F("in_flight", "uploading now", st.InFlight),
			statuspage.F("retrying", "waiting for a retry", st.Retrying),
			statuspage.F("retry_age", "failing for", age(st.RetryAge)),
			statuspage.F("uploaded", "shipped since the start", st.Uploaded),
		}},
		statuspage.Section{Title: "Service", Facts: []statuspage.Fact{
			statuspage.F("pipeline", "pipeline", st.Pipeline),
			statuspage.F("destination", "destination", textfmt.Dash(st.Destination)),
			statuspage.F("spool", "spool", st.Spool),
			statuspage.F("epoch", "spool epoch", textfmt.Dash(st.Epoch)),
			statuspage.F("replay", "replay", textfmt.Dash(st.Replay)),
			statuspage.F("started", "started", textfmt.Time(st.Started)),
			statuspage.F("uptime", "up for", now.Sub(st.Started).Round(time.Second)),
		}},
		s.probeSection(st))
	for _, t := range st.Tables {
		k := "table_" + t.Dataset + "_"
		p.Sections = append(p.Sections, statuspage.Section{Title: "Iceberg table " + t.Dataset, Facts: []statuspage.Fact{
			statuspage.F(k+"committed", "files committed since the start", t.Committed),
			statuspage.F(k+"waiting", "shipped, waiting for a commit", t.Waiting),
			statuspage.F(k+"rejected", "left out of the table", t.Rejected),
			statuspage.F(k+"version", "metadata version", t.Version),
			statuspage.F(k+"location", "location", textfmt.Dash(t.Location)),
		}})
	}
	p.Chart = &statuspage.Chart{Title: "Shipped", Unit: "bytes/s", Step: s.m.shipped.Step(), Rates: s.m.shipped.Rates(now)}
	for i := len(st.RecentErrors) - 1; i >= 0; i-- { // newest first
		e := st.RecentErrors[i]
		msg := e.Message
		if e.Key != "" && !strings.Contains(msg, e.Key) {
			msg = e.Key + ": " + msg
		}
		p.Errors = append(p.Errors, statuspage.Error{Time: e.Time, Code: e.Code, Message: msg, Remedy: errcode.Remedy(e.Code)})
	}
	return p
}

// probeSection is what the startup probe found about the store, and the clock.
func (s *Shipper) probeSection(st Status) statuspage.Section {
	sec := statuspage.Section{Title: "Store", Facts: []statuspage.Fact{
		statuspage.F("conditional_put", "conditional_put", st.ConditionalPut),
		statuspage.F("put_mode", "writes", textfmt.Dash(string(st.PutMode))),
		statuspage.F("clock_skew_seconds", "store clock − this clock", fmt.Sprintf("%+.0f s", st.clockSkew())),
	}}
	if st.Probe == nil {
		sec.Note = "no probe has finished yet"
		return sec
	}
	sec.Facts = append(sec.Facts, statuspage.F("coordination", "probe's verdict", st.Probe.Coordination))
	if !st.Probe.Remembered.IsZero() {
		sec.Facts = append(sec.Facts, statuspage.F("probe_remembered", "verdict remembered from", textfmt.Time(st.Probe.Remembered)))
	}
	sec.Note = st.Probe.Reason
	if st.Probe.ClockSkewWarning != "" {
		sec.Note += " " + st.Probe.ClockSkewWarning
	}
	return sec
}

// sized is n bytes, exactly and in binary units.
func sized(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d", n)
	}
	return fmt.Sprintf("%d (%s)", n, textfmt.Size(n))
}

// age is a number of seconds as a duration to the second: "0s", "3m12s", "127h58m14s".
func age(seconds float64) string {
	return (time.Duration(seconds * float64(time.Second))).Round(time.Second).String()
}
