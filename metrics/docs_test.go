package metrics_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/vigia/vigia/live"
	"github.com/vigia/vigia/metrics"
)

const (
	moduleRoot = ".."
	docsPath   = "../docs/metrics.md"
)

// metricName matches a Vigia metric name.
var metricName = regexp.MustCompile(`^vigia_[a-z0-9_]+$`)

// metric is what docs/metrics.md or the code says of one metric. An empty
// typ or nil labels mean unknown.
type metric struct {
	name   string
	typ    string   // counter, gauge, histogram, summary
	labels []string // label names, sorted
	where  string   // file:line of the code, or the docs
}

// docMetrics parses the tables of docs/metrics.md: rows whose first cell is
// a metric name, then its type, its labels (the names in backquotes, out of
// parentheses) and its meaning.
func docMetrics(t *testing.T) map[string]metric {
	t.Helper()
	data, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `(vigia_[a-z0-9_]+)` \\| ([a-z]+) \\|([^|]*)\\|")
	parens := regexp.MustCompile(`\([^)]*\)`)
	quoted := regexp.MustCompile("`([^`]+)`")
	out := map[string]metric{}
	for i, line := range strings.Split(string(data), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			if strings.HasPrefix(line, "| `vigia_") {
				t.Errorf("%s:%d: row not understood: %s", docsPath, i+1, line)
			}
			continue
		}
		labels := []string{}
		for _, q := range quoted.FindAllStringSubmatch(parens.ReplaceAllString(m[3], ""), -1) {
			labels = append(labels, q[1])
		}
		slices.Sort(labels)
		if _, dup := out[m[1]]; dup {
			t.Errorf("%s:%d: %s listed twice", docsPath, i+1, m[1])
		}
		out[m[1]] = metric{name: m[1], typ: m[2], labels: labels, where: docsPath + ":" + strconv.Itoa(i+1)}
	}
	if len(out) == 0 {
		t.Fatalf("no metric found in %s", docsPath)
	}
	return out
}

// codeMetrics finds, in the module's Go source (tests and testdata aside),
// the metrics the code defines: names given to a prometheus.New* call (type
// from the constructor, labels from a []string literal and ConstLabels
// keys), to a function literal that wraps one (counter := func(name, ...)
// { ... prometheus.NewCounterFunc(...) }), or else written in the
// arguments of a Register or MustRegister call (type and labels unknown).
// mentions are all the string constants that look like a metric name,
// wherever they are (a benchmark reading a scrape, say).
func codeMetrics(t *testing.T) (defs map[string][]metric, mentions map[string]string) {
	t.Helper()
	defs, mentions = map[string][]metric{}, map[string]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(moduleRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != moduleRoot && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		// Local helpers wrapping a constructor, by name.
		helpers := map[string]metric{}
		ast.Inspect(f, func(n ast.Node) bool {
			as, ok := n.(*ast.AssignStmt)
			if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
				return true
			}
			id, ok1 := as.Lhs[0].(*ast.Ident)
			fl, ok2 := as.Rhs[0].(*ast.FuncLit)
			if !ok1 || !ok2 {
				return true
			}
			ast.Inspect(fl.Body, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					if ctor := constructor(c); ctor != "" {
						helpers[id.Name] = metric{typ: ctorType(ctor), labels: ctorLabels(ctor, c.Args)}
					}
				}
				return true
			})
			return true
		})
		defined := map[*ast.BasicLit]bool{}
		define := func(lit *ast.BasicLit, typ string, labels []string) {
			defined[lit] = true
			m := metric{name: stringLit(lit), typ: typ, labels: labels, where: fset.Position(lit.Pos()).String()}
			defs[m.name] = append(defs[m.name], m)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if ctor := constructor(c); ctor != "" {
				for _, lit := range literals(c.Args) {
					define(lit, ctorType(ctor), ctorLabels(ctor, c.Args))
				}
			} else if id, ok := c.Fun.(*ast.Ident); ok {
				if h, ok := helpers[id.Name]; ok {
					for _, lit := range literals(c.Args) {
						define(lit, h.typ, h.labels)
					}
				}
			}
			return true
		})
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if name := stringLit(n); name != "" {
					mentions[name] = fset.Position(n.Pos()).String()
				}
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if ok && (sel.Sel.Name == "MustRegister" || sel.Sel.Name == "Register") {
					for _, lit := range literals(n.Args) {
						if !defined[lit] {
							define(lit, "", nil)
						}
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return defs, mentions
}

// constructor returns the name of a prometheus.New* metric constructor
// called by c, "" for any other call.
func constructor(c *ast.CallExpr) string {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok || !isIdent(sel.X, "prometheus") || ctorType(sel.Sel.Name) == "" {
		return ""
	}
	return sel.Sel.Name
}

// stringLit returns the value of a string constant that looks like a
// metric name, "" for any other node.
func stringLit(l *ast.BasicLit) string {
	if l.Kind != token.STRING {
		return ""
	}
	s, err := strconv.Unquote(l.Value)
	if err != nil || !metricName.MatchString(s) {
		return ""
	}
	return s
}

// literals returns the metric-name constants within nodes.
func literals(nodes []ast.Expr) []*ast.BasicLit {
	var out []*ast.BasicLit
	for _, n := range nodes {
		ast.Inspect(n, func(n ast.Node) bool {
			if l, ok := n.(*ast.BasicLit); ok && stringLit(l) != "" {
				out = append(out, l)
			}
			return true
		})
	}
	return out
}

func ctorType(ctor string) string {
	for _, typ := range []string{"Counter", "Gauge", "Histogram", "Summary"} {
		if strings.HasPrefix(ctor, "New"+typ) {
			return strings.ToLower(typ)
		}
	}
	return ""
}

// ctorLabels returns the label names of a prometheus.New* call: the
// []string literal of a *Vec and the keys of a ConstLabels literal; nil
// when they are not literals.
func ctorLabels(ctor string, args []ast.Expr) []string {
	labels := []string{}
	vec := strings.HasSuffix(ctor, "Vec")
	for i, a := range args {
		if i == 0 {
			opts, ok := a.(*ast.CompositeLit)
			if !ok {
				return nil
			}
			for _, e := range opts.Elts {
				kv, ok := e.(*ast.KeyValueExpr)
				if !ok || !isIdent(kv.Key, "ConstLabels") {
					continue
				}
				cl, ok := kv.Value.(*ast.CompositeLit)
				if !ok {
					return nil
				}
				for _, e := range cl.Elts {
					kv, ok := e.(*ast.KeyValueExpr)
					if !ok {
						return nil
					}
					k, ok := kv.Key.(*ast.BasicLit)
					if !ok {
						return nil
					}
					s, _ := strconv.Unquote(k.Value)
					labels = append(labels, s)
				}
			}
			continue
		}
		if vec {
			cl, ok := a.(*ast.CompositeLit)
			if !ok {
				return nil
			}
			for _, e := range cl.Elts {
				l, ok := e.(*ast.BasicLit)
				if !ok {
					return nil
				}
				s, _ := strconv.Unquote(l.Value)
				labels = append(labels, s)
			}
			vec = false
		}
	}
	slices.Sort(labels)
	return labels
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// TestDocsListEveryMetric checks docs/metrics.md against the code: every
// metric the code defines is documented with its type and labels, and every
// documented metric is defined by the code.
func TestDocsListEveryMetric(t *testing.T) {
	docs := docMetrics(t)
	defs, _ := codeMetrics(t)
	for name, ms := range defs {
		d, ok := docs[name]
		if !ok {
			t.Errorf("%s: metric %s is not in %s", ms[0].where, name, docsPath)
			continue
		}
		for _, m := range ms {
			if m.typ != "" && m.typ != d.typ {
				t.Errorf("%s: %s is a %s, %s says %s", m.where, name, m.typ, d.where, d.typ)
			}
			if m.labels != nil && !slices.Equal(m.labels, d.labels) {
				t.Errorf("%s: %s has labels %v, %s says %v", m.where, name, m.labels, d.where, d.labels)
			}
		}
	}
	for name, d := range docs {
		if _, ok := defs[name]; !ok {
			t.Errorf("%s: metric %s is defined nowhere in the code", d.where, name)
		}
	}
}

// TestMentionsAreMetrics checks that every metric name the code or the docs
// mention (a benchmark reading a scrape, an alert, a dashboard) is a
// documented metric, or a histogram's series.
func TestMentionsAreMetrics(t *testing.T) {
	docs := docMetrics(t)
	known := func(name string) bool {
		if _, ok := docs[name]; ok {
			return true
		}
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if d, ok := docs[strings.TrimSuffix(name, suffix)]; ok && d.typ == "histogram" {
				return true
			}
		}
		return false
	}
	_, mentions := codeMetrics(t)
	for name, where := range mentions {
		if !known(name) {
			t.Errorf("%s: %s is not a documented metric", where, name)
		}
	}
	word := regexp.MustCompile(`\bvigia_[a-z0-9_]+`)
	for _, pattern := range []string{"../README.md", "../docs/*.md", "../deploy/*/*.json", "../deploy/*/*.yaml", "../deploy/*.yaml"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range word.FindAllString(string(data), -1) {
				if !known(name) {
					t.Errorf("%s mentions %s, not a documented metric", file, name)
				}
			}
		}
	}
}

// registered gathers reg and returns its Vigia metrics as the docs describe
// them.
func registered(t *testing.T, reg *prometheus.Registry) map[string]metric {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]metric{}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "vigia_") {
			continue
		}
		labels := []string{}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if !slices.Contains(labels, lp.GetName()) {
					labels = append(labels, lp.GetName())
				}
			}
		}
		slices.Sort(labels)
		typ := strings.ToLower(mf.GetType().String())
		if mf.GetType() == dto.MetricType_GAUGE_HISTOGRAM {
			typ = "gauge_histogram"
		}
		out[mf.GetName()] = metric{name: mf.GetName(), typ: typ, labels: labels}
	}
	return out
}

// checkRegistered checks that the metrics a package registers at run time
// are the ones the code of dir defines, with the documented types and
// labels.
func checkRegistered(t *testing.T, dir string, got map[string]metric) {
	t.Helper()
	docs := docMetrics(t)
	defs, _ := codeMetrics(t)
	for name, ms := range defs {
		if filepath.Base(filepath.Dir(ms[0].where)) != dir {
			continue
		}
		if _, ok := got[name]; !ok {
			t.Errorf("%s: metric %s is defined but not registered (or a vector without series: give it one in the test)", ms[0].where, name)
		}
	}
	for name, m := range got {
		d, ok := docs[name]
		if !ok {
			t.Errorf("registered metric %s is not in %s", name, docsPath)
			continue
		}
		if m.typ != d.typ || !slices.Equal(m.labels, d.labels) {
			t.Errorf("registered %s is a %s with labels %v; %s says a %s with labels %v", name, m.typ, m.labels, d.where, d.typ, d.labels)
		}
	}
}

// TestMetricsRegistered checks the metrics the constructors and Register
// functions of the package register: every metric defined here, with its
// documented type and labels.
func TestMetricsRegistered(t *testing.T) {
	reg := metrics.NewRegistry()
	zero := func() float64 { return 0 }
	m := metrics.NewRecorder(reg, zero, zero)
	metrics.RegisterCapacity(reg, zero)
	metrics.RegisterSpoolQuota(reg, zero, zero)
	metrics.RegisterGapJournal(reg, zero)
	h := metrics.NewHTTP(reg)
	metrics.NewExport(reg)
	metrics.RejectedConnections(reg, "http", []string{"max_connections"})
	r := metrics.NewRTMP(reg)
	metrics.NewCluster(reg)
	metrics.NewAudio(reg, func() metrics.AudioStats { return metrics.AudioStats{} })
	metrics.RegisterThumbs(reg, func() metrics.ThumbStats { return metrics.ThumbStats{} }, func() bool { return true })
	metrics.RegisterMotion(reg, func() metrics.MotionStats { return metrics.MotionStats{} })
	metrics.RegisterDecoders(reg, []string{"crash"}, func() metrics.DecoderStats { return metrics.DecoderStats{} }, func() int64 { return 0 })
	metrics.NewDuplicateRecording(reg)
	// Label sets appear with their first value.
	m.CamerasByStatus.WithLabelValues("ONLINE").Set(1)
	m.RecordedRatio.WithLabelValues("cam", "1h").Set(1)
	m.GapRecords.WithLabelValues("camera_offline").Inc()
	h.Requests.WithLabelValues("GET /healthz", "200").Inc()
	h.Duration.WithLabelValues("GET /healthz").Observe(0.001)
	r.Refused.WithLabelValues("bad_key").Inc()
	r.Errors.WithLabelValues("bad_message").Inc()
	checkRegistered(t, "metrics", registered(t, reg))
	for _, want := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		mfs, _ := reg.Gather()
		if !slices.ContainsFunc(mfs, func(mf *dto.MetricFamily) bool { return mf.GetName() == want }) {
			t.Errorf("NewRegistry lacks %s", want)
		}
	}
}

// TestRecorderReasonsFromZero checks that the documented drop reasons are
// exported before the first drop.
func TestRecorderReasonsFromZero(t *testing.T) {
	reg := prometheus.NewRegistry()
	zero := func() float64 { return 0 }
	metrics.NewRecorder(reg, zero, zero)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"vigia_dropped_frames_total":   {"camera_over_rate", "no_keyframe", "no_params", "queue_full", "spool_write"},
		"vigia_segments_dropped_total": {"spool_full"},
	}
	for _, mf := range mfs {
		w, ok := want[mf.GetName()]
		if !ok {
			continue
		}
		var got []string
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				got = append(got, lp.GetValue())
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, w) {
			t.Errorf("%s exported with reasons %v, want %v", mf.GetName(), got, w)
		}
		delete(want, mf.GetName())
	}
	for name := range want {
		t.Errorf("%s not exported before the first drop", name)
	}
}

// TestLiveMetricsRegistered checks the metrics live.New registers.
func TestLiveMetricsRegistered(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := live.New(live.Config{Registerer: reg})
	// vigia_live_requests_total appears with the first request.
	s.Handler().ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/live/cam/index.m3u8", nil))
	w, err := live.NewWebRTC(s, live.WebRTCConfig{TranscodeMax: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	mux := http.NewServeMux()
	w.Register(mux)
	// vigia_live_webrtc_requests_total appears with the first request too.
	mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/live/cam/whep", nil))
	checkRegistered(t, "live", registered(t, reg))
}
