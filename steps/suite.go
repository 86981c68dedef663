// Package steps binds the Gherkin sentences of features/ to code. Steps are
// thin: they parse their arguments, read the devnet through package devnet
// and the metrics contract (a Reader), call a pure function of package
// assertions and return its verdict as an error naming the budget, the
// measured value and the worst nodes.
//
// A Suite opens each distinct devnet.Config once (keyed by Config.String)
// and shares it between scenarios; AfterSuite closes every devnet and
// writes the report (package report). Scenario state lives in the
// scenario's context under an unexported key, so scenarios do not leak
// into each other.
//
// Budgets come from the feature's Examples tables and can be overridden
// from the environment: SEGDIFF_BUDGET_<KEY>, keys listed in Budgets.
package steps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	stresspkg "github.com/segdiff/segdiff/internal/stress"

	"github.com/cucumber/godog"
	"golang.org/x/sync/errgroup"

	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/report"
)

// Tags that scope scenarios.
const (
	TagEmbedded = "@embedded" // runs against the embedded devnet
	TagKurtosis = "@kurtosis" // runs against a Kurtosis enclave
	TagSlow     = "@slow"     // large networks (500 nodes); opt-in
	// TagExtended marks scenarios past the default run's time: the rest
	// of the stress list at tier 4 (fourteen more devnets); opt-in, run
	// nightly and by make e2e-extended.
	TagExtended = "@extended"
	// TagBroken marks scenarios built to fail (a broken network run as an
	// ordinary budget check); opt-in, for proving the suite fails closed.
	TagBroken = "@broken"
	// TagMixed marks scenarios that compare a mixed devnet's patched and
	// unpatched nodes; opt-in, as only a mixed devnet can run them.
	TagMixed = "@mixed"
	// TagBytes marks scenarios that need a byte source: the contract, or a
	// client's per-topic byte counter. On a client with neither they fail
	// closed naming it; ~@bytes excludes them on purpose.
	TagBytes = "@bytes"
	// TagContract marks scenarios that need the metrics contract beside the
	// standard API (the agreement of the two); ~@contract excludes them on
	// purpose on unpatched clients.
	TagContract = "@contract"
)

// Config configures a Suite. Zero values take the defaults named per field;
// ConfigFromEnv fills it from the environment.
type Config struct {
	// Backend is the devnet backend name passed to devnet.Open (DEVNET;
	// default "embedded").
	Backend string
	// Tag marks the scenarios this backend runs; a scenario tagged
	// @embedded or @kurtosis but not Tag is skipped (default "@"+Backend).
	Tag string
	// Preset is used by "Given a <mode> devnet" (SEGDIFF_PRESET; default
	// "ci" for the embedded backend, "" for others).
	Preset string
	// Seed is the devnet seed (SEGDIFF_SEED; default 0 = backend default).
	Seed int64
	// Slow runs @slow scenarios; otherwise they are skipped (SEGDIFF_SLOW=1).
	Slow bool
	// Extended runs @extended scenarios; otherwise they are skipped
	// (SEGDIFF_EXTENDED=1).
	Extended bool
	// Broken runs @broken scenarios, which must fail; otherwise they are
	// skipped.
	Broken bool
	// Mixed runs @mixed scenarios; otherwise they are skipped.
	Mixed bool
	// ReportsDir receives reports/<RunID>/; "" writes no report
	// (SEGDIFF_REPORTS_DIR; default "reports").
	ReportsDir string
	// RunID names this run's report directory (SEGDIFF_RUN_ID; default
	// report.NewRunID(now)).
	RunID string
	// PollInterval is how often the devnet is re-read while waiting for warm
	// slots (SEGDIFF_POLL_INTERVAL; default 1s).
	PollInterval time.Duration
	// WaitTimeout bounds the wait for warm slots (SEGDIFF_WAIT_TIMEOUT;
	// default (slots+3) slot durations + 2 minutes).
	WaitTimeout time.Duration
	// Prefetch is how many devnets Prefetch opens at once; 0 disables it
	// (SEGDIFF_PREFETCH; ConfigFromEnv defaults to 2).
	Prefetch int
	// Reader reads the nodes' metrics (default ScrapeReader in mode
	// SEGDIFF_SCRAPE: "direct" (default) or "promql").
	Reader Reader
	// ReportPause holds the report open this long after its run and before
	// it is written, interruptible by Abort (SEGDIFF_REPORT_PAUSE; default
	// 0), so that make check-interrupt can press Ctrl-C while a report is
	// half written: godog's junit and cucumber files staged, the rest not.
	ReportPause time.Duration
	// Log receives progress and [diagnostics/...] lines (default os.Stderr).
	// Devnets open concurrently, so the suite serialises its writes to Log.
	Log io.Writer
}

// ConfigFromEnv reads a Config from the environment through EnvVars (the
// variables named in Config's field docs) after checking every set
// variable: a malformed value, or a SEGDIFF_ variable that is not a segdiff
// variable, is an error naming it, returned before anything runs.
func ConfigFromEnv() (Config, error) {
	c := Config{ReportsDir: "reports", Prefetch: 2}
	if err := applyEnv(&c, os.Environ()); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Suite runs the features against one backend. Its hooks run on godog's
// goroutine; the devnet cache is safe for concurrent scenarios.
type Suite struct {
	cfg Config

	// ctx outlives scenarios: devnets opened under a scenario's context
	// would be stopped when that scenario ends.
	ctx    context.Context
	cancel context.CancelFunc

	defsOnce sync.Once
	defs     []compiled // definitions, compiled for the undefined-step check

	selectedMu sync.Mutex
	selected   map[selection]selected // what each devnet sentence selects, resolved once

	mu          sync.Mutex
	devnets     map[string]*opening // by devnet.Config.String(); failures are kept, not retried
	run         report.Run
	written     report.Written
	deferReport bool // Finish writes the report, not AfterSuite
	finishOnce  sync.Once
	finishErr   error
	interrupted atomic.Int32  // signals Interrupt has seen
	aborted     chan struct{} // closed by Abort: no report is written after it
	abortOnce   sync.Once
	gapsSeen    map[string]bool // standard-record gaps printed, by devnet and line
}

// New returns a Suite with cfg's defaults applied.
func New(cfg Config) *Suite {
	if cfg.Backend == "" {
		cfg.Backend = defaultBackend
	}
	if cfg.Tag == "" {
		cfg.Tag = "@" + cfg.Backend
	}
	if cfg.Preset == "" && cfg.Backend == defaultBackend {
		cfg.Preset = "ci"
	}
	if cfg.RunID == "" {
		cfg.RunID = report.NewRunID(time.Now())
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.Reader == nil {
		cfg.Reader = ScrapeReader{}
	}
	if cfg.Log == nil {
		cfg.Log = os.Stderr
	}
	cfg.Log = &lockedWriter{w: cfg.Log}
	ctx, cancel := context.WithCancel(context.Background())
	return &Suite{cfg: cfg, ctx: ctx, cancel: cancel, devnets: map[string]*opening{}, aborted: make(chan struct{}),
		run: report.Run{ID: cfg.RunID, Backend: cfg.Backend}}
}

// Config returns the suite's configuration with defaults applied.
func (s *Suite) Config() Config { return s.cfg }

// SetSlow enables or disables @slow scenarios (TestFeatures enables them
// when its tag filter selects @slow).
func (s *Suite) SetSlow(on bool) { s.cfg.Slow = on }

// SetExtended enables or disables @extended scenarios (TestFeatures
// enables them when its tag filter selects @extended).
func (s *Suite) SetExtended(on bool) { s.cfg.Extended = on }

// SetBroken enables or disables @broken scenarios (TestFeatures enables
// them when its tag filter selects @broken).
func (s *Suite) SetBroken(on bool) { s.cfg.Broken = on }

// SetMixed enables or disables @mixed scenarios (TestFeatures and the
// godog CLI's preflight enable them when the tag filter selects @mixed).
func (s *Suite) SetMixed(on bool) { s.cfg.Mixed = on }

// SetPrefetch sets how many devnets Prefetch opens at once (0 disables).
func (s *Suite) SetPrefetch(n int) { s.cfg.Prefetch = n }

// Results returns the run recorded so far (complete after AfterSuite).
func (s *Suite) Results() report.Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.run
}

// Written returns what AfterSuite wrote.
func (s *Suite) Written() report.Written {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.written
}

// DeferReport makes AfterSuite leave the report to Finish, which the
// caller runs once godog's formatters have written their files (they write
// after AfterSuite), so the whole report directory is published at once.
func (s *Suite) DeferReport() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deferReport = true
}

// InitializeTestSuite registers the suite hooks: BeforeSuite stamps the
// run; AfterSuite closes every devnet and, unless DeferReport was called,
// writes the report.
func (s *Suite) InitializeTestSuite(ctx *godog.TestSuiteContext) {
	ctx.BeforeSuite(func() {
		s.mu.Lock()
		s.run.Started = time.Now()
		s.mu.Unlock()
	})
	ctx.AfterSuite(func() {
		s.mu.Lock()
		deferred := s.deferReport
		s.mu.Unlock()
		s.closeAll()
		if deferred {
			return
		}
		if _, err := s.Finish(); err != nil {
			fmt.Fprintf(s.cfg.Log, "[diagnostics/report] %v\n", err)
		}
	})
}

// closeAll closes every devnet and releases what the backends hold.
func (s *Suite) closeAll() {
	if err := s.Close(); err != nil {
		fmt.Fprintf(s.cfg.Log, "[diagnostics/devnet] %v\n", err)
	}
	if err := devnet.Shutdown(); err != nil {
		fmt.Fprintf(s.cfg.Log, "[diagnostics/devnet] %v\n", err)
	}
}

// Finish writes the report (once; later calls return the first result)
// and returns what it wrote.
func (s *Suite) Finish() (report.Written, error) {
	s.finishOnce.Do(func() { s.finishErr = s.writeReport() })
	return s.Written(), s.finishErr
}

// Abort stops every devnet being opened or open, releases the backends'
// resources and discards the unfinished report: the interrupt path, after
// which the process exits.
func (s *Suite) Abort() {
	s.abortOnce.Do(func() { close(s.aborted) })
	s.closeAll()
	s.mu.Lock() // a report write in progress finishes first
	defer s.mu.Unlock()
	if s.cfg.ReportsDir != "" {
		if err := report.Discard(s.cfg.ReportsDir, s.cfg.RunID); err != nil {
			fmt.Fprintf(s.cfg.Log, "[diagnostics/report] %v\n", err)
		}
	}
}

// Outcome is the run's verdict once godog returned: an error when no
// scenario executed (a run that checked nothing must not pass) or when any
// scenario failed, naming them.
func (s *Suite) Outcome() error {
	run := s.Results()
	if run.Executed() == 0 {
		return fmt.Errorf("no scenario executed (%d selected, all skipped): this run checked nothing", len(run.Scenarios))
	}
	var failed []string
	for _, sc := range run.Scenarios {
		if sc.Status == report.StatusFailed {
			failed = append(failed, fmt.Sprintf("%q", sc.Name))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d scenarios failed: %s", len(failed), run.Executed(), strings.Join(failed, ", "))
	}
	return nil
}

// InitializeScenario registers the scenario hooks and every step.
func (s *Suite) InitializeScenario(ctx *godog.ScenarioContext) {
	ctx.Before(s.beforeScenario)
	ctx.After(s.afterScenario)
	ctx.StepContext().Before(s.failUndefined)
	s.register(ctx)
}

// opening is one devnet being opened or open; done closes when d or err
// is set.
type opening struct {
	done chan struct{}
	d    devnet.Devnet
	err  error
}

// Close stops opens in flight and closes every devnet the suite opened. It
// is safe to call twice.
func (s *Suite) Close() error {
	s.cancel()
	s.mu.Lock()
	all := s.devnets
	s.devnets = map[string]*opening{}
	s.mu.Unlock()
	var errs []string
	for key, o := range all {
		<-o.done
		if o.err != nil {
			continue
		}
		if err := o.d.Close(); err != nil {
			errs = append(errs, fmt.Sprintf("close devnet (%s): %v", key, err))
		}
	}
	if len(errs) > 0 {
		slices.Sort(errs)
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// open returns the shared devnet for cfg, opening it on first use; callers
// asking while it opens wait for that open. A failed open is not retried.
func (s *Suite) open(cfg devnet.Config) (devnet.Devnet, error) {
	key := cfg.String()
	s.mu.Lock()
	o, ok := s.devnets[key]
	if !ok {
		if s.ctx.Err() != nil {
			s.mu.Unlock()
			return nil, fmt.Errorf("open devnet (%s): suite closed", key)
		}
		o = &opening{done: make(chan struct{})}
		s.devnets[key] = o
	}
	s.mu.Unlock()
	if !ok {
		start := time.Now()
		o.d, o.err = devnet.Open(s.ctx, s.cfg.Backend, cfg)
		if o.err == nil {
			fmt.Fprintf(s.cfg.Log, "segdiff: opened %s devnet (%s) in %s\n", s.cfg.Backend, key, time.Since(start).Round(time.Millisecond))
			s.describe(key, cfg, o.d)
		}
		close(o.done)
	}
	<-o.done
	return o.d, o.err
}

// Prefetch starts opening, in the background, every devnet the planned
// scenarios will ask for (scenarios this suite would skip excluded), at most
// Config.Prefetch at a time, so that independent devnets start concurrently
// instead of one after another as scenarios reach them.
func (s *Suite) Prefetch(plan Plan) {
	parallel := s.cfg.Prefetch
	seen := map[string]bool{}
	var cfgs []devnet.Config
	for _, p := range plan.Runnable() {
		for _, st := range p.Steps {
			cfgs, _ := s.configsOf(st.Text) // Preflight has reported a bad one
			for _, cfg := range cfgs {
				if !seen[cfg.String()] {
					seen[cfg.String()] = true
					cfgs = append(cfgs, cfg)
				}
			}
		}
	}
	if parallel < 1 {
		return
	}
	go func() {
		var g errgroup.Group
		g.SetLimit(parallel)
		for _, cfg := range cfgs {
			g.Go(func() error {
				_, _ = s.open(cfg) // errors reach the scenario that needs it
				return nil
			})
		}
		_ = g.Wait()
	}()
}

// configsOf returns the devnet configs a Given step text selects (none for
// any other text), or why the text selects no valid devnet.
func (s *Suite) configsOf(text string) ([]devnet.Config, error) {
	var modes []string
	preset, stress := s.cfg.Preset, ""
	if m := reDevnet.FindStringSubmatch(text); m != nil {
		modes = m[1:2]
	} else if m := reStressed.FindStringSubmatch(text); m != nil {
		modes, stress = m[1:2], m[2]
	} else if m := reStressedPreset.FindStringSubmatch(text); m != nil {
		modes, preset, stress = m[1:2], m[2], m[3]
	} else if m := reDevnetPreset.FindStringSubmatch(text); m != nil {
		modes, preset = m[1:2], m[2]
	} else if m := reIdentical.FindStringSubmatch(text); m != nil {
		modes, preset = m[1:3], m[3]
	}
	var out []devnet.Config
	for _, mode := range modes {
		cfg, err := s.devnetConfig(mode, preset, stress)
		if err != nil {
			return nil, err
		}
		out = append(out, cfg)
	}
	return out, nil
}

// selection is what a devnet sentence names: a mode, a preset and the text
// of a stress ("" for none).
type selection struct{ mode, preset, stress string }

// selected is a selection resolved: the devnet, or why there is none.
type selected struct {
	cfg devnet.Config
	err error
}

// devnetConfig is the devnet a sentence selects: mode and preset, under the
// stress written stressText (package stress: "withholder=50%, loss-data=5%"),
// with the suite's seed. The plan (Preflight, Prefetch, BudgetRows) asks
// it of the sentences before any scenario runs and the steps ask it again
// when they run; each selection is resolved once and kept, so a sentence's
// stress is parsed once per run and its typed value is what reaches the
// backend.
func (s *Suite) devnetConfig(mode, preset, stressText string) (devnet.Config, error) {
	key := selection{mode, preset, stressText}
	s.selectedMu.Lock()
	defer s.selectedMu.Unlock()
	if r, ok := s.selected[key]; ok {
		return r.cfg, r.err
	}
	var r selected
	m, err := devnet.ParseMode(mode)
	if err != nil {
		r.err = err
	} else if set, err := stresspkg.Parse(stressText); err != nil {
		r.err = err
	} else {
		r.cfg = devnet.Config{Mode: m, Preset: preset, Seed: s.cfg.Seed}
		if len(set) > 0 {
			r.cfg.Stress = set
		}
	}
	if s.selected == nil {
		s.selected = map[selection]selected{}
	}
	s.selected[key] = r
	return r.cfg, r.err
}

// describe records what an opened devnet runs, for the report's titles.
func (s *Suite) describe(key string, cfg devnet.Config, d devnet.Devnet) {
	info := report.DevnetInfo{Mode: string(cfg.Mode), Seed: cfg.Seed, Nodes: cfg.Nodes, Preset: cfg.Preset, Stress: cfg.Stress.String()}
	if ds, ok := d.(devnet.Describer); ok {
		desc := ds.Describe()
		info = report.DevnetInfo{Mode: string(desc.Mode), Seed: desc.Seed, Nodes: desc.Nodes, Preset: desc.Preset, Stress: cfg.Stress.String(), Roles: desc.Roles}
	} else if nodes, err := d.Nodes(s.ctx); err == nil {
		info.Nodes = len(nodes)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.run.Devnets == nil {
		s.run.Devnets = map[string]report.DevnetInfo{}
	}
	s.run.Devnets[key] = info
}

func (s *Suite) writeReport() error {
	if s.cfg.ReportsDir == "" {
		s.mu.Lock()
		s.run.Finished = time.Now()
		s.mu.Unlock()
		return nil
	}
	fmt.Fprintf(s.cfg.Log, "segdiff: writing the report to %s\n", filepath.Join(s.cfg.ReportsDir, s.cfg.RunID))
	if s.cfg.ReportPause > 0 {
		select {
		case <-time.After(s.cfg.ReportPause):
		case <-s.aborted:
		}
	}
	// Abort waits on s.mu for a write in progress, so a report is either
	// published whole before an interrupt is handled or never.
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.aborted:
		return errors.New("write report: the run was interrupted")
	default:
	}
	s.run.Finished = time.Now()
	w, err := report.Write(s.cfg.ReportsDir, s.run)
	if err != nil {
		return err
	}
	s.written = w
	return nil
}

// beforeScenario seeds the scenario state and skips scenarios that do not
// apply: another backend's tag, or @slow without opting in.
func (s *Suite) beforeScenario(ctx context.Context, sc *godog.Scenario) (context.Context, error) {
	var tags []string
	for _, t := range sc.Tags {
		tags = append(tags, t.Name)
	}
	st := &scenario{suite: s, rec: report.Scenario{Name: sc.Name, Tags: tags}, skipped: s.skipReason(tags)}
	if st.skipped == "" {
		texts := make([]string, len(sc.Steps))
		for i, step := range sc.Steps {
			texts[i] = step.Text
		}
		st.skipped = s.devnetSkip(texts)
	}
	ctx = context.WithValue(ctx, scenarioKey{}, st)
	if st.skipped == "" {
		return ctx, nil
	}
	fmt.Fprintf(s.cfg.Log, "segdiff: skip %q: %s\n", sc.Name, st.skipped)
	return ctx, godog.ErrSkip
}

// skipReason says why a scenario with tags does not run here, or "".
func (s *Suite) skipReason(tags []string) string {
	scoped := slices.Contains(tags, TagEmbedded) || slices.Contains(tags, TagKurtosis)
	switch {
	case scoped && !slices.Contains(tags, s.cfg.Tag):
		return fmt.Sprintf("not tagged %s", s.cfg.Tag)
	case slices.Contains(tags, TagSlow) && !s.cfg.Slow:
		return "@slow: set SEGDIFF_SLOW=1 or select @slow with -godog.tags"
	case slices.Contains(tags, TagExtended) && !s.cfg.Extended:
		return "@extended: set SEGDIFF_EXTENDED=1 or select @extended with -godog.tags (make e2e-extended)"
	case slices.Contains(tags, TagBroken) && !s.cfg.Broken:
		return "@broken: built to fail; select @broken with -godog.tags to see the suite fail"
	case slices.Contains(tags, TagMixed) && !s.cfg.Mixed:
		return "@mixed: needs a devnet of patched and unpatched nodes (network-params/mixed.yaml); select @mixed with -godog.tags"
	}
	return ""
}

// devnetSkip says why the backend would not run a scenario of these step
// texts on the devnet it attaches to (devnet.SkipReason: an enclave that
// runs another mode than the row's), "" when it would.
func (s *Suite) devnetSkip(texts []string) string {
	for _, text := range texts {
		cfgs, _ := s.configsOf(text) // a bad sentence fails in its step
		for _, cfg := range cfgs {
			if r := devnet.SkipReason(s.cfg.Backend, cfg); r != "" {
				return r
			}
		}
	}
	return ""
}

func (s *Suite) afterScenario(ctx context.Context, sc *godog.Scenario, err error) (context.Context, error) {
	st, ok := ctx.Value(scenarioKey{}).(*scenario)
	if !ok {
		return ctx, nil
	}
	st.rec.Status = report.StatusPassed
	switch {
	case st.skipped != "":
		st.rec.Status, st.rec.Error = report.StatusSkipped, st.skipped
	case err != nil:
		// Pending and undefined steps fail too: a scenario that did not
		// check what it says is not a pass.
		st.rec.Status, st.rec.Error = report.StatusFailed, err.Error()
		st.diagnose()
		// The verdicts (worst nodes, sample counts) travel with the failure
		// into cucumber.json.
		if body, jerr := json.MarshalIndent(st.rec.Verdicts, "", "  "); jerr == nil && len(st.rec.Verdicts) > 0 {
			ctx = godog.Attach(ctx, godog.Attachment{Body: body, FileName: "verdicts.json", MediaType: "application/json"})
		}
	}
	s.mu.Lock()
	s.run.Scenarios = append(s.run.Scenarios, st.rec)
	s.mu.Unlock()
	return ctx, nil
}

// lockedWriter serialises writes from the devnets opening concurrently and
// the scenario goroutine.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
