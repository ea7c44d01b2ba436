// Package statuspage renders the page a wharf service serves at / beside /status, /metrics
// and /healthz: one self-contained HTML document (no script, no external asset: a
// Content-Security-Policy forbids both), readable on a phone, that reloads itself.
//
// A service builds a Page from the same state its /status serves, so the two never disagree:
// its state and health with the reason, facts (name, value) grouped in sections, tables (the
// backfill fleet, quarantined objects), a throughput chart drawn as inline SVG from a Meter,
// and the recent errors with their WHARF_ code and the remedy docs/errors.md gives for it.
// Every figure carries a data-k attribute naming it, so a test (or a scraper) can read the
// rendered page back.
//
// Meter counts a quantity (bytes shipped, records read) in fixed time slots and gives the
// per-second rate of each of the last few minutes; it needs no goroutine.
package statuspage
