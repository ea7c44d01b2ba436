package statuspage

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"html/template"
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

//go:embed page.html
var pageHTML string

var tmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"seconds": func(d time.Duration) int { return int(math.Ceil(d.Seconds())) },
	"stamp":   func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") },
	"tone":    tone,
}).Parse(pageHTML))

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

// Render writes p as HTML.
func Render(w io.Writer, p Page) error {
	if p.Refresh <= 0 {
		p.Refresh = 5 * time.Second
	}
	return tmpl.Execute(w, struct {
		Page
		ChartView *chartView
	}{p, p.Chart.view()})
}

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
