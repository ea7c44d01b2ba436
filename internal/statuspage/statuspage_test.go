package statuspage

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestMeterRatesOfWholeSlots(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	m := NewMeter(10*time.Second, 3)
	m.Add(t0, 100)                    // slot 0
	m.Add(t0.Add(5*time.Second), 100) // slot 0
	m.Add(t0.Add(12*time.Second), 50) // slot 1
	m.Add(t0.Add(25*time.Second), 7)  // slot 2, still filling at 25 s
	got := m.Rates(t0.Add(25 * time.Second))
	want := []float64{20, 5, 0.7} // slots 0, 1 and 2 (still filling: over a whole step)
	if !equal(got, want) {
		t.Fatalf("rates %v, want %v", got, want)
	}
	// 20 s later the ring has moved past slots 0 and 1.
	got = m.Rates(t0.Add(45 * time.Second))
	if want := []float64{0.7, 0, 0}; !equal(got, want) { // slots 2, 3 and 4
		t.Fatalf("rates after a quiet spell %v, want %v", got, want)
	}
	// A long silence empties it; an Add older than the ring is dropped.
	m.Add(t0, 1e6)
	if got := m.Rates(t0.Add(time.Hour)); !equal(got, []float64{0, 0, 0}) {
		t.Fatalf("rates after an hour %v, want zeros", got)
	}
	if m.Span() != 30*time.Second || m.Step() != 10*time.Second {
		t.Fatalf("span %s step %s", m.Span(), m.Step())
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if d := a[i] - b[i]; d > 1e-9 || d < -1e-9 {
			return false
		}
	}
	return true
}

func TestRenderShowsEveryFigureEscaped(t *testing.T) {
	p := Page{Component: "ship", Name: "edge-1", State: "fatal", Health: "fatal", Reason: "a collision <b>",
		Generated: time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC),
		Sections: []Section{{Title: "Backlog", Facts: []Fact{F("backlog_files", "files", 12), F("backlog_bytes", "bytes", "3.4 MiB")}},
			{Title: "Fleet", Table: &Table{Key: "fleet", Columns: []string{"node", "split"}, Rows: [][]string{{"w1", "s-0001"}}}}},
		Chart: &Chart{Title: "Shipped", Unit: "bytes/s", Step: 10 * time.Second, Rates: []float64{0, 1000, 500}},
		Errors: []Error{{Time: time.Date(2026, 12, 4, 9, 59, 0, 0, time.UTC), Code: "WHARF_STATUSPAGE_TEST_CODE", Message: "key x: <script>alert(1)</script>",
			Remedy: "Wipe the <dust> off the key's shelf."}}}
	var b strings.Builder
	if err := Render(&b, p); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{
		`data-k="backlog_files">12<`, `data-k="backlog_bytes">3.4 MiB<`, `data-k="state">fatal<`, `class="badge bad" data-k="health">fatal<`,
		`<tr data-row="w1"><td data-label="node">w1</td><td data-label="split">s-0001</td></tr>`, `data-k="chart_peak">1000<`, `data-k="chart_last">500<`,
		`<code>WHARF_STATUSPAGE_TEST_CODE</code>`, `&lt;script&gt;alert(1)&lt;/script&gt;`, `a collision &lt;b&gt;`,
		`<meta http-equiv="refresh" content="5">`, `name="viewport"`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if r := p.Errors[0].Remedy; !strings.Contains(html, escaped(r)) {
		t.Errorf("the error's remedy %q is not on the page", r)
	}
	if regexp.MustCompile(`(?i)<script|src=|href="http`).MatchString(html) {
		t.Errorf("the page loads something or runs a script:\n%s", html)
	}
	if n := strings.Count(html, "<rect "); n != 3 {
		t.Errorf("%d bars, want 3", n)
	}
}

// escaped escapes s as html/template escapes text.
func escaped(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;", "+", "&#43;")
	return r.Replace(s)
}

func TestHandlerForbidsScriptsAndAssets(t *testing.T) {
	srv := httptest.NewServer(Handler(func(context.Context) Page {
		return Page{Component: "backfill", Name: "job", State: "running", Health: "ok"}
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	csp := resp.Header.Get("Content-Security-Policy")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("status %d, headers %v", resp.StatusCode, resp.Header)
	}
	if !strings.Contains(string(body), "none since the start") {
		t.Fatalf("a page without errors does not say so:\n%s", body)
	}
}
