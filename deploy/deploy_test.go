package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"

	"github.com/wharfdata/wharf/backfill"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/metricsfile"
	"github.com/wharfdata/wharf/ship"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/mem"
)

const (
	rulesFile     = "prometheus/wharf-alerts.yml"
	ruleTestsFile = "prometheus/wharf-alerts_test.yml"
)

var dashboardFiles = []string{"grafana/ship.json", "grafana/backfill.json", "grafana/jobs.json"}

// promtool runs promtool with args and fails t, with its output and the lines of explain,
// unless it succeeds.
func promtool(t *testing.T, explain []string, args ...string) {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), testenv.Promtool(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s%s", strings.Join(args, " "), err, out, strings.Join(explain, "\n"))
	}
}

// TestRules checks the alerting rules and runs their unit tests with promtool.
func TestRules(t *testing.T) {
	promtool(t, nil, "check", "rules", rulesFile)
	promtool(t, nil, "test", "rules", ruleTestsFile)
}

// rules is the part of a rules file the tests read.
type rules struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Record      string            `yaml:"record"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// ruleTests is the part of a promtool test file the tests read.
type ruleTests struct {
	Tests []struct {
		InputSeries []struct {
			Series string `yaml:"series"`
		} `yaml:"input_series"`
		AlertRuleTest []struct {
			Alertname string `yaml:"alertname"`
			ExpAlerts []any  `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestRulesShape: every alert has a for:, a severity and annotations that say what happened
// and what to do, and the unit tests have a case where it fires and one where it does not.
func TestRulesShape(t *testing.T) {
	var rs rules
	readYAML(t, rulesFile, &rs)
	var rt ruleTests
	readYAML(t, ruleTestsFile, &rt)
	fires, silent := map[string]int{}, map[string]int{}
	for _, tg := range rt.Tests {
		for _, c := range tg.AlertRuleTest {
			if len(c.ExpAlerts) > 0 {
				fires[c.Alertname]++
			} else {
				silent[c.Alertname]++
			}
		}
	}
	alerts := map[string]bool{}
	for _, g := range rs.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			alerts[r.Alert] = true
			switch {
			case r.For == "":
				t.Errorf("%s: no for:", r.Alert)
			case r.Labels["severity"] != "page" && r.Labels["severity"] != "warning":
				t.Errorf("%s: severity %q, want page or warning", r.Alert, r.Labels["severity"])
			case r.Annotations["summary"] == "" || r.Annotations["description"] == "":
				t.Errorf("%s: want a summary and a description", r.Alert)
			}
			if fires[r.Alert] == 0 || silent[r.Alert] == 0 {
				t.Errorf("%s: %d test case(s) where it fires and %d where it does not, want at least one of each",
					r.Alert, fires[r.Alert], silent[r.Alert])
			}
		}
	}
	for name := range fires {
		if !alerts[name] {
			t.Errorf("%s is tested but is no alert of %s", name, rulesFile)
		}
	}
	if len(alerts) < 10 {
		t.Errorf("%d alerts, want the 10 the rules file documents", len(alerts))
	}
}

// The dashboard model, as far as these dashboards use it: decoding with unknown fields
// disallowed catches a misspelt key. Free-form parts (options, field config) stay raw.
type (
	dashboard struct {
		UID                  string                    `json:"uid"`
		Title                string                    `json:"title"`
		Description          string                    `json:"description"`
		Tags                 []string                  `json:"tags"`
		Editable             bool                      `json:"editable"`
		GraphTooltip         int                       `json:"graphTooltip"`
		SchemaVersion        int                       `json:"schemaVersion"`
		Version              int                       `json:"version"`
		Timezone             string                    `json:"timezone"`
		Time                 struct{ From, To string } `json:"time"`
		Refresh              string                    `json:"refresh"`
		FiscalYearStartMonth int                       `json:"fiscalYearStartMonth"`
		LiveNow              bool                      `json:"liveNow"`
		Annotations          json.RawMessage           `json:"annotations"`
		Links                []json.RawMessage         `json:"links"`
		Templating           struct {
			List []variable `json:"list"`
		} `json:"templating"`
		Panels []panel `json:"panels"`
	}
	datasource struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	}
	variable struct {
		Name       string            `json:"name"`
		Label      string            `json:"label"`
		Type       string            `json:"type"`
		Datasource *datasource       `json:"datasource"`
		Query      json.RawMessage   `json:"query"`
		Definition string            `json:"definition"`
		Refresh    int               `json:"refresh"`
		Sort       int               `json:"sort"`
		IncludeAll bool              `json:"includeAll"`
		Multi      bool              `json:"multi"`
		AllValue   *string           `json:"allValue"`
		Current    json.RawMessage   `json:"current"`
		Hide       int               `json:"hide"`
		Regex      string            `json:"regex"`
		Options    []json.RawMessage `json:"options"`
	}
	panel struct {
		ID              int                      `json:"id"`
		Type            string                   `json:"type"`
		Title           string                   `json:"title"`
		Description     string                   `json:"description"`
		Datasource      *datasource              `json:"datasource"`
		GridPos         struct{ X, Y, W, H int } `json:"gridPos"`
		Targets         []target                 `json:"targets"`
		FieldConfig     json.RawMessage          `json:"fieldConfig"`
		Options         json.RawMessage          `json:"options"`
		Transformations []json.RawMessage        `json:"transformations"`
	}
	target struct {
		Datasource   *datasource `json:"datasource"`
		Expr         string      `json:"expr"`
		LegendFormat string      `json:"legendFormat"`
		RefID        string      `json:"refId"`
		Range        bool        `json:"range"`
		Instant      bool        `json:"instant"`
		Format       string      `json:"format"`
	}
)

// The data source every panel and query names: the dashboard's variable.
const dsUID = "${datasource}"

func readDashboard(t *testing.T, path string) *dashboard {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var d dashboard
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		t.Fatalf("%s: data after the dashboard", path)
	}
	return &d
}

// query is a PromQL expression of a dashboard, and where it is.
type query struct{ where, expr string }

// labelValues matches a variable's label_values(SELECTOR, LABEL) query.
var labelValues = regexp.MustCompile(`^label_values\((.+),\s*[a-zA-Z_][a-zA-Z0-9_]*\)$`)

// checkDashboard checks d's variables and panels and returns every PromQL expression it has.
func checkDashboard(t *testing.T, path string, d *dashboard) []query {
	t.Helper()
	if d.UID == "" || d.Title == "" || d.SchemaVersion < 36 {
		t.Errorf("%s: uid %q, title %q, schemaVersion %d: want a uid, a title and schemaVersion 36 or later", path, d.UID, d.Title, d.SchemaVersion)
	}
	var qs []query
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
		switch v.Type {
		case "datasource":
			if v.Name != "datasource" || string(v.Query) != `"prometheus"` {
				t.Errorf("%s: data source variable %q of %s, want datasource of prometheus", path, v.Name, v.Query)
			}
		case "query":
			if v.Datasource == nil || *v.Datasource != (datasource{"prometheus", dsUID}) {
				t.Errorf("%s: variable %s: data source %v, want %s", path, v.Name, v.Datasource, dsUID)
			}
			m := labelValues.FindStringSubmatch(v.Definition)
			if m == nil {
				t.Errorf("%s: variable %s: query %q is not label_values(SELECTOR, LABEL)", path, v.Name, v.Definition)
				continue
			}
			qs = append(qs, query{path + ": variable " + v.Name, m[1]})
		}
	}
	if !vars["datasource"] {
		t.Errorf("%s: no datasource variable", path)
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		where := fmt.Sprintf("%s: panel %d %q", path, p.ID, p.Title)
		if ids[p.ID] {
			t.Errorf("%s: id used twice", where)
		}
		ids[p.ID] = true
		qs = append(qs, checkPanel(t, where, p)...)
	}
	if len(d.Panels) == 0 {
		t.Errorf("%s: no panels", path)
	}
	for _, q := range qs {
		for _, m := range varRef.FindAllStringSubmatch(q.expr, -1) {
			if !vars[m[1]] && !strings.HasPrefix(m[1], "__") {
				t.Errorf("%s: $%s is no variable of the dashboard", q.where, m[1])
			}
		}
	}
	return qs
}

var varRef = regexp.MustCompile(`\$\{?([a-zA-Z_][a-zA-Z0-9_]*)`)

func checkPanel(t *testing.T, where string, p panel) []query {
	t.Helper()
	want := datasource{"prometheus", dsUID}
	if p.Datasource == nil || *p.Datasource != want {
		t.Errorf("%s: data source %v, want %v", where, p.Datasource, want)
	}
	if p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X+p.GridPos.W > 24 {
		t.Errorf("%s: gridPos %+v outside the 24 columns", where, p.GridPos)
	}
	var qs []query
	refs := map[string]bool{}
	for _, tg := range p.Targets {
		if tg.Datasource == nil || *tg.Datasource != want {
			t.Errorf("%s: target %s: data source %v, want %v", where, tg.RefID, tg.Datasource, want)
		}
		if refs[tg.RefID] || tg.RefID == "" {
			t.Errorf("%s: target refId %q empty or used twice", where, tg.RefID)
		}
		refs[tg.RefID] = true
		if strings.TrimSpace(tg.Expr) != "" {
			qs = append(qs, query{where + " target " + tg.RefID, tg.Expr})
		}
	}
	if len(qs) == 0 {
		t.Errorf("%s: no target with an expression", where)
	}
	return qs
}

// dashboardQueries reads and checks every dashboard and returns their expressions.
func dashboardQueries(t *testing.T) []query {
	t.Helper()
	var qs []query
	for _, path := range dashboardFiles {
		qs = append(qs, checkDashboard(t, path, readDashboard(t, path))...)
	}
	return qs
}

// TestDashboards checks the dashboards, then their expressions as PromQL: promtool checks
// them as the recording rules of a file of their own, with Grafana's variables replaced.
func TestDashboards(t *testing.T) {
	qs := dashboardQueries(t)
	vars := strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h", "$job", ".*", "$instance", ".*", "$kind", ".*", "$name", ".*")
	type rule struct {
		Record string `yaml:"record"`
		Expr   string `yaml:"expr"`
	}
	var rs []rule
	var explain []string // which query each rule is
	for i, q := range qs {
		name := fmt.Sprintf("dashboard:query_%d:check", i)
		rs = append(rs, rule{name, vars.Replace(q.expr)})
		explain = append(explain, name+" is "+q.where)
	}
	b, err := yaml.Marshal(map[string]any{"groups": []map[string]any{{"name": "dashboards", "rules": rs}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dashboard-queries.yml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	promtool(t, explain, "check", "rules", path)
}

// families is what the code exports, by metric family name.
type families map[string]*dto.MetricFamily

// missing returns the names of used that families does not export: a histogram's (or a
// summary's) _bucket, _sum and _count series count as their family.
func (fs families) missing(used []string) []string {
	var out []string
	for _, name := range used {
		if fs[name] != nil {
			continue
		}
		if fam, suffix := histogramFamily(name); fam != "" {
			mf := fs[fam]
			if mf != nil && (mf.GetType() == dto.MetricType_HISTOGRAM || suffix != "_bucket" && mf.GetType() == dto.MetricType_SUMMARY) {
				continue
			}
		}
		out = append(out, name)
	}
	return out
}

func histogramFamily(name string) (family, suffix string) {
	for _, s := range []string{"_bucket", "_sum", "_count"} {
		if f, ok := strings.CutSuffix(name, s); ok {
			return f, s
		}
	}
	return "", ""
}

func parseExposition(t *testing.T, what string, r io.Reader, into families) {
	t.Helper()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := parser.TextToMetricFamilies(r)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if len(mfs) == 0 {
		t.Fatalf("%s: no metrics", what)
	}
	maps.Copy(into, mfs)
}

// scrape gets h's /metrics in the text format, as Prometheus would.
func scrape(t *testing.T, what string, h http.Handler, into families) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, err := http.NewRequestWithContext(t.Context(), "GET", srv.URL+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s /metrics: %s", what, resp.Status)
	}
	parseExposition(t, what+" /metrics", resp.Body, into)
}

// shipMetrics adds the families of a ship service's /metrics: a Shipper made by ship.New
// serves them all before Run (the spool's by state, an empty histogram).
func shipMetrics(t *testing.T, into families) {
	cfg := ship.DefaultConfig()
	cfg.Spool, cfg.To = filepath.Join(t.TempDir(), "spool"), "mem://deploy/raw"
	cfg.Pipeline, cfg.Node, cfg.Listen = "edge", "gw-17", ship.ListenOff
	s, err := ship.New(cfg, ship.Options{})
	if err != nil {
		t.Fatal(err)
	}
	scrape(t, "ship", s.Handler(), into)
}

// backfillMetrics adds the families of a backfill worker's /metrics, a worker of the
// in-process coordinator over a memory store.
func backfillMetrics(t *testing.T, into families) {
	cfg := backfill.DefaultConfig()
	cfg.Source, cfg.To, cfg.Job, cfg.Node = "mem://src/logs/", "-", "deploy", "node-a"
	j, err := backfill.New(cfg, backfill.Options{Coordinator: backfill.NewSolo(), Source: store.New(mem.New(), nil),
		Prefix: "logs/", Sink: backfill.NewConsumer("deploy")})
	if err != nil {
		t.Fatal(err)
	}
	scrape(t, "backfill", j.Handler(), into)
}

// figureCall is a command setting a metrics file figure: job.Set("rows", …).
var figureCall = regexp.MustCompile(`\.Set\("([a-z0-9_]+)",\s*[^"\s]`)

// commandFigures returns the figures cmd/wharf sets on its metrics files' jobs.
func commandFigures(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob("../cmd/wharf/*.go")
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range figureCall.FindAllSubmatch(b, -1) {
			set[string(m[1])] = true
		}
	}
	if len(set) == 0 {
		t.Fatal("found no job.Set(figure, …) in cmd/wharf: the figure scan is broken")
	}
	return slices.Sorted(maps.Keys(set))
}

// metricsFileMetrics adds the families of a metrics file that package metricsfile writes:
// a job that succeeded with every figure the commands set and a run id, one that failed,
// and one still running.
func metricsFileMetrics(t *testing.T, into families) {
	path := filepath.Join(t.TempDir(), "wharf.prom")
	f, err := metricsfile.Start(path, "export", &metricsfile.Options{Every: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close(nil)
	ok := f.Begin("orders")
	for _, fig := range commandFigures(t) {
		ok.Set(fig, 1)
	}
	ok.SetRunID("r1")
	if err := ok.End(nil); err != nil {
		t.Fatal(err)
	}
	if err := f.Begin("sales").End(errors.New("failed")); err != nil {
		t.Fatal(err)
	}
	f.Begin("running") // writes the file
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	parseExposition(t, "metrics file", bytes.NewReader(b), into)
}

// exported returns every metric family the code exports.
func exported(t *testing.T) families {
	t.Helper()
	fs := families{}
	shipMetrics(t, fs)
	backfillMetrics(t, fs)
	metricsFileMetrics(t, fs)
	return fs
}

var (
	quoted     = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	metricName = regexp.MustCompile(`\b(?:wharf|process|go)_[a-z0-9_]+\b`)
)

// metricNames returns the metric names expr uses (label values in quotes left out).
func metricNames(expr string) []string {
	return metricName.FindAllString(quoted.ReplaceAllString(expr, `""`), -1)
}

// usedNames returns every metric name of the rules' expressions, of their tests' input
// series and of the dashboards' queries, with where each is used.
func usedNames(t *testing.T) map[string][]string {
	t.Helper()
	used := map[string][]string{}
	add := func(where, expr string) {
		for _, n := range metricNames(expr) {
			used[n] = append(used[n], where)
		}
	}
	var rs rules
	readYAML(t, rulesFile, &rs)
	for _, g := range rs.Groups {
		for _, r := range g.Rules {
			add(rulesFile+": "+r.Alert+r.Record, r.Expr)
		}
	}
	var rt ruleTests
	readYAML(t, ruleTestsFile, &rt)
	for i, tg := range rt.Tests {
		for _, s := range tg.InputSeries {
			add(fmt.Sprintf("%s: test %d", ruleTestsFile, i+1), s.Series)
		}
	}
	for _, q := range dashboardQueries(t) {
		add(q.where, q.expr)
	}
	return used
}

// TestMetricNames checks every metric name the rules, their tests and the dashboards use
// against what a ship service, a backfill worker and a metrics file really export.
func TestMetricNames(t *testing.T) {
	fs := exported(t)
	used := usedNames(t)
	if len(used) < 30 {
		t.Errorf("%d metric names found in the rules and dashboards: the scan is broken", len(used))
	}
	for _, name := range fs.missing(slices.Sorted(maps.Keys(used))) {
		t.Errorf("%s is used but not exported by ship, backfill or a metrics file; used in:\n\t%s",
			name, strings.Join(slices.Compact(used[name]), "\n\t"))
	}
	t.Run("checker", func(t *testing.T) {
		// The same check must fail on a made-up name, and on a suffix of a family that is
		// no histogram.
		got := fs.missing([]string{"wharf_ship_no_such_metric", "wharf_ship_upload_seconds_bucket",
			"wharf_ship_uploads_total_bucket", "wharf_job_rows", "process_resident_memory_bytes"})
		want := []string{"wharf_ship_no_such_metric", "wharf_ship_uploads_total_bucket"}
		if !slices.Equal(got, want) {
			t.Errorf("missing = %v, want %v", got, want)
		}
		if n := metricNames(`wharf_job_success{code="WHARF_x", name="wharf_fake_name"} == 0`); !slices.Equal(n, []string{"wharf_job_success"}) {
			t.Errorf("names of an expression with quoted label values: %v", n)
		}
	})
}
