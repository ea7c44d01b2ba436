package statuspage

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"html"
	"io"
	"math"
	"net/http"
	"time"
)

// Page is what the status page shows.
type Page struct {
	Component string // "ship", "backfill"
	Name      string // the node, the job
	State     string
	Health    string // ok (green), degraded or unhealthy (amber), fatal or failed (red)
	Reason    string // why the health is not ok, or what an ok service is doing
	Refresh   time.Duration
	Generated time.Time
	Sections  []Section
	Chart     *Chart
	Errors    []Error
}

// Section is a titled group of facts and, optionally, a table.
type Section struct {
	Title string
	Facts []Fact
	Table *Table
	Note  string // a line under the facts, when the section has something to say
}

// Fact is one figure: Key names it in the page's data-k attribute (stable, for a reader of
// the page), Name is its label.
type Fact struct {
	Key, Name, Value string
}

// F is a Fact.
func F(key, name string, value any) Fact { return Fact{Key: key, Name: name, Value: fmt.Sprint(value)} }

// Table is rows under column headings; Key names the table in its data-k attribute, and each
// row's first cell is its data-row.
type Table struct {
	Key     string
	Columns []string
	Rows    [][]string
	Empty   string // shown when there is no row
}

// Chart is a throughput chart: the per-second rates of equal steps, oldest first.
type Chart struct {
	Title string
	Unit  string // "bytes/s", "records/s"
	Step  time.Duration
	Rates []float64
}

// Error is an error the service met, with what to do about its code (errcode.Remedy).
type Error struct {
	Time    time.Time
	Code    string
	Message string
	Remedy  string
}

// The page's style sheet, inline: the page loads nothing.
//
//go:embed page.css
var pageCSS string

// tone is the colour class of a health.
func tone(health string) string {
	switch health {
	case "ok", "succeeded":
		return "ok"
	case "fatal", "failed":
		return "bad"
	}
	return "warn"
}

// chartView is a Chart laid out as the bars of an inline SVG of Width by 60.
type chartView struct {
	Chart
	Bars        []bar
	Peak, Width float64
	Span        string
	Last        string
}

type bar struct{ X, Y, W, H float64 }

func (c *Chart) view() *chartView {
	if c == nil {
		return nil
	}
	v := &chartView{Chart: *c, Width: 300}
	for _, r := range c.Rates {
		v.Peak = max(v.Peak, r)
	}
	n := float64(max(len(c.Rates), 1))
	w := v.Width / n
	for i, r := range c.Rates {
		h := 0.0
		if v.Peak > 0 {
			h = 60 * r / v.Peak
		}
		v.Bars = append(v.Bars, bar{X: float64(i) * w, Y: 60 - h, W: max(w-1, 1), H: h})
	}
	v.Span = (c.Step * time.Duration(len(c.Rates))).String()
	if len(c.Rates) > 0 {
		v.Last = Human(c.Rates[len(c.Rates)-1])
	}
	return v
}

// Human writes v with an SI suffix (k, M, G) and three significant digits.
func Human(v float64) string {
	for _, u := range []struct {
		s string
		f float64
	}{{"G", 1e9}, {"M", 1e6}, {"k", 1e3}} {
		if math.Abs(v) >= u.f {
			return fmt.Sprintf("%.3g%s", v/u.f, u.s)
		}
	}
	return fmt.Sprintf("%.3g", v)
}

// Render writes p as HTML. It writes the document by hand, each value escaped with
// html.EscapeString, rather than with html/template: a template's method calls by name
// (reflect's Value.Method) would make the linker keep every exported method of the whole
// binary, some 15 MiB of it.
func Render(w io.Writer, p Page) error {
	if p.Refresh <= 0 {
		p.Refresh = 5 * time.Second
	}
	var b pageWriter
	refresh := int(math.Ceil(p.Refresh.Seconds()))
	b.raw("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	b.f("<meta http-equiv=\"refresh\" content=\"%d\">\n", refresh)
	b.f("<title>wharf %s %s: %s</title>\n", esc(p.Component), esc(p.Name), esc(p.State))
	b.raw("<style>\n" + pageCSS + "</style>\n</head>\n<body>\n<header>\n")
	b.f("<h1>wharf %s <span data-k=\"name\">%s</span>\n<span class=\"badge %s\" data-k=\"health\">%s</span></h1>\n",
		esc(p.Component), esc(p.Name), tone(p.Health), esc(p.Health))
	b.f("<p class=\"reason\">state <b data-k=\"state\">%s</b>", esc(p.State))
	if p.Reason != "" {
		b.f(": <span data-k=\"reason\">%s</span>", esc(p.Reason))
	}
	b.raw("</p>\n</header>\n<main>\n")
	if v := p.Chart.view(); v != nil {
		b.f("<section>\n<h2>%s</h2>\n", esc(v.Title))
		b.f("<svg viewBox=\"0 0 %g 60\" preserveAspectRatio=\"none\" role=\"img\" aria-label=\"%s, the last %s\">",
			v.Width, esc(v.Title), esc(v.Span))
		for _, r := range v.Bars {
			b.f("<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"></rect>", r.X, r.Y, r.W, r.H)
		}
		b.f("</svg>\n<p class=\"note\">the last %s, one bar per %s: peak <span data-k=\"chart_peak\">%s</span> %s, last <span data-k=\"chart_last\">%s</span> %s</p>\n</section>\n",
			esc(v.Span), esc(v.Step.String()), esc(fmt.Sprintf("%.6g", v.Peak)), esc(v.Unit), esc(v.Last), esc(v.Unit))
	}
	for _, s := range p.Sections {
		if s.Table != nil {
			b.raw("<section class=\"wide\">\n")
		} else {
			b.raw("<section>\n")
		}
		b.f("<h2>%s</h2>\n", esc(s.Title))
		if len(s.Facts) > 0 {
			b.raw("<dl>\n")
			for _, f := range s.Facts {
				b.f("<dt>%s</dt><dd data-k=\"%s\">%s</dd>\n", esc(f.Name), esc(f.Key), esc(f.Value))
			}
			b.raw("</dl>\n")
		}
		if s.Note != "" {
			b.f("<p class=\"note\">%s</p>\n", esc(s.Note))
		}
		if s.Table != nil {
			b.table(s.Table.Key, s.Table.Columns, s.Table.Rows, s.Table.Empty, nil)
		}
		b.raw("</section>\n")
	}
	b.raw("<section class=\"wide\">\n<h2>Recent errors</h2>\n")
	rows := make([][]string, len(p.Errors))
	for i, e := range p.Errors {
		rows[i] = []string{stamp(e.Time), e.Code, e.Message, e.Remedy}
	}
	b.table("errors", []string{"time", "code", "error", "what to do"}, rows, "none since the start", func(row []string) string { return row[1] })
	b.raw("</section>\n</main>\n")
	b.f("<footer>generated <span data-k=\"generated\">%s</span>, reloads every %d s ·\n", stamp(p.Generated), refresh)
	b.raw("<a href=\"status\">/status</a> (JSON) · <a href=\"metrics\">/metrics</a> · <a href=\"healthz\">/healthz</a></footer>\n</body>\n</html>\n")
	_, err := w.Write(b.buf.Bytes())
	return err
}

// pageWriter builds the document.
type pageWriter struct{ buf bytes.Buffer }

func (b *pageWriter) raw(s string)              { b.buf.WriteString(s) }
func (b *pageWriter) f(format string, a ...any) { fmt.Fprintf(&b.buf, format, a...) }

// table writes a table named key: each row's data-row is rowKey(row), else its first cell; each
// cell is labelled with its column, for the stacked layout of a narrow screen. The errors'
// table writes its code cell as code.
func (b *pageWriter) table(key string, cols []string, rows [][]string, empty string, rowKey func([]string) string) {
	b.f("<div class=\"scroll\"><table data-k=\"%s\">\n<thead><tr>", esc(key))
	for _, c := range cols {
		b.f("<th>%s</th>", esc(c))
	}
	b.raw("</tr></thead>\n<tbody>\n")
	for _, row := range rows {
		id := ""
		if rowKey != nil {
			id = rowKey(row)
		} else if len(row) > 0 {
			id = row[0]
		}
		b.f("<tr data-row=\"%s\">", esc(id))
		for i, c := range row {
			label := ""
			if i < len(cols) {
				label = cols[i]
			}
			if rowKey != nil && label == "code" {
				b.f("<td data-label=\"%s\"><code>%s</code></td>", esc(label), esc(c))
				continue
			}
			b.f("<td data-label=\"%s\">%s</td>", esc(label), esc(c))
		}
		b.raw("</tr>\n")
	}
	if len(rows) == 0 {
		b.f("<tr><td colspan=\"%d\">%s</td></tr>\n", len(cols), esc(empty))
	}
	b.raw("</tbody>\n</table></div>\n")
}

func esc(s string) string { return html.EscapeString(s) }

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }

// Handler serves the page that page builds at each request (with the request's context):
// no script, no asset from anywhere (the Content-Security-Policy says so to the browser too),
// never cached.
func Handler(page func(ctx context.Context) Page) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		if err := Render(&buf, page(r.Context())); err != nil {
			http.Error(w, "status page: "+err.Error(), http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		_, _ = w.Write(buf.Bytes())
	})
}
