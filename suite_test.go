package segdiff_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cucumber/godog"
	"github.com/cucumber/godog/colors"

	// Backends register themselves with devnet.Register.
	_ "github.com/segdiff/segdiff/internal/devnet/embedded"
	_ "github.com/segdiff/segdiff/internal/devnet/kurtosis"
	"github.com/segdiff/segdiff/internal/report"
	"github.com/segdiff/segdiff/steps"
)

// suite is shared by TestFeatures and by the runner the godog CLI generates
// from this file's InitializeTestSuite and InitializeScenario.
var suite = newSuite()

// opts holds godog's options under go test; -godog.* flags (e.g.
// -godog.tags='@slow') override the defaults set here.
var opts = godog.Options{
	Output: colors.Colored(os.Stdout),
	Paths:  []string{"features"},
	Strict: true,
	Format: "pretty",
}

// underTest is set by TestFeatures. The godog CLI's generated runner calls
// InitializeTestSuite without it, and then the preflight runs there.
var underTest bool

// suiteRan is set once the suite runs scenarios (its preflight passed), so
// that printOutcome has a run to print.
var suiteRan bool

func init() {
	// The godog CLI's runner parses its tag filter before calling any of
	// our hooks, and godog's parser panics on a malformed one: check it here.
	if o, ok := cliOptions(); ok {
		if err := steps.CheckTagFilter(o.Tags); err != nil {
			fmt.Fprintf(os.Stderr, "segdiff: %v\n", err)
			os.Exit(2)
		}
	}
	opts.Tags = steps.DefaultTags(suite.Config().Backend)
	// The standard flag set (not pflag) so that both -godog.tags and
	// --godog.tags work, as go test passes either through.
	godog.BindFlags("godog.", flag.CommandLine, &opts)
}

func newSuite() *steps.Suite {
	cfg, err := steps.ConfigFromEnv()
	if err != nil {
		fmt.Fprintf(os.Stderr, "segdiff: %v\n", err)
		os.Exit(2)
	}
	return steps.New(cfg)
}

// InitializeTestSuite registers the suite hooks (devnet cache, report).
// Under the godog CLI it first runs the suite's preflight on the CLI's own
// options and exits 2 with the cause when the run would check nothing
// (unknown backend or tag, nothing selected, undefined steps): the CLI
// would otherwise report such a run as a pass.
func InitializeTestSuite(ctx *godog.TestSuiteContext) {
	if !underTest {
		cliPreflight()
	}
	suite.InitializeTestSuite(ctx)
	if !underTest {
		// After the suite's hook has written the report; godog's own
		// summary follows and counts skipped scenarios as passed.
		ctx.AfterSuite(func() { suiteRan = true; printOutcome(os.Stdout) })
	}
}

// printOutcome prints the suite's true tally (every scenario, a skip with
// its reason, a failure with its first failed check) and, as its last line,
// the report's path. TestMain calls it after the tests so that the path is
// the last line make e2e prints, below go test's --- PASS lines.
func printOutcome(w io.Writer) {
	if !suiteRan {
		return
	}
	run := suite.Results()
	fmt.Fprint(w, "\n"+report.Table(run))
	if skipped := len(run.Scenarios) - run.Executed(); skipped > 0 && !underTest {
		fmt.Fprintf(w, "segdiff: godog's summary below counts the %d skipped scenario(s) as passed; they checked nothing\n", skipped)
	}
	if dir := suite.Written().Dir; dir != "" {
		fmt.Fprintf(w, "report: %s\n", filepath.Join(dir, "summary.md"))
	}
}

// InitializeScenario registers the scenario hooks and every step.
func InitializeScenario(ctx *godog.ScenarioContext) { suite.InitializeScenario(ctx) }

// cliOptions reads the options the godog CLI passed to its runner the way
// the runner does. ok is false when the arguments are not godog's (go
// test's -test.* flags): the runner reports its own flag errors.
func cliOptions() (o godog.Options, ok bool) {
	fs := flag.NewFlagSet("godog", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	godog.BindFlags("", fs, &o)
	if err := fs.Parse(os.Args[1:]); err != nil {
		return o, false
	}
	o.Paths = fs.Args()
	if len(o.Paths) == 0 {
		o.Paths = []string{"features"}
	}
	return o, true
}

// cliPreflight checks the godog CLI's options.
func cliPreflight() {
	o, ok := cliOptions()
	if !ok {
		return
	}
	if steps.OptedIn(o.Tags, steps.TagMixed) {
		suite.SetMixed(true)
	}
	if steps.OptedIn(o.Tags, steps.TagExtended) {
		suite.SetExtended(true)
	}
	plan, err := suite.Preflight(context.Background(), o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "segdiff: %v\n", err)
		os.Exit(2)
	}
	suite.AbortOnSignal(os.Exit)
	suite.Prefetch(plan)
}

// TestFeatures runs features/ against the backend named by DEVNET (default
// embedded). It skips unless SEGDIFF_E2E=1, so go test ./... stays fast.
//
// It fails closed: before anything opens, the preflight rejects an unknown
// backend or tag, a filter that selects nothing (or nothing this backend
// runs) and undefined steps; afterwards a run in which no scenario executed
// fails. SIGINT/SIGTERM stop every devnet, remove temporary files and the
// unfinished report, and exit 130.
func TestFeatures(t *testing.T) {
	if os.Getenv("SEGDIFF_E2E") != "1" {
		t.Skip("set SEGDIFF_E2E=1 to run the Gherkin suite against a devnet (make e2e)")
	}
	underTest = true
	cfg := suite.Config()
	o := opts
	o.TestingT = t
	if flag.NArg() > 0 {
		o.Paths = flag.Args()
	}
	if !o.Strict {
		t.Log("segdiff: -godog.strict=false ignored: undefined and pending steps always fail")
		o.Strict = true
	}
	if steps.OptedIn(o.Tags, steps.TagBroken) {
		suite.SetBroken(true)
	}
	if steps.OptedIn(o.Tags, steps.TagMixed) {
		suite.SetMixed(true)
	}
	if steps.OptedIn(o.Tags, steps.TagExtended) {
		suite.SetExtended(true)
	}
	if steps.OptedIn(o.Tags, steps.TagSlow) {
		suite.SetSlow(true)
		// Two 500-node simulations at once would need twice the memory;
		// open them one after the other unless told otherwise.
		if os.Getenv("SEGDIFF_PREFETCH") == "" {
			suite.SetPrefetch(1)
		}
	}
	plan, err := suite.Preflight(context.Background(), o)
	if err != nil {
		t.Fatalf("segdiff: %v", err)
	}
	// godog's junit and cucumber files go into the report's staging
	// directory; Finish publishes it whole.
	var formatDir string
	if cfg.ReportsDir != "" {
		formatDir = report.StagingDir(cfg.ReportsDir, cfg.RunID)
	} else {
		formatDir = t.TempDir()
	}
	if err := os.MkdirAll(formatDir, 0o755); err != nil {
		t.Fatal(err)
	}
	o.Format = fmt.Sprintf("%s,junit:%s,cucumber:%s", o.Format, filepath.Join(formatDir, "junit.xml"), filepath.Join(formatDir, "cucumber.json"))
	// Ctrl-C stops every devnet, removes temporary files and the
	// unfinished report, and exits 130 (TestMain listens for it).
	release := claimInterrupts(func(sig os.Signal) { suite.Interrupt(sig, os.Exit) })
	defer release()
	suite.DeferReport()
	ts := godog.TestSuite{
		Name:                 "segdiff",
		TestSuiteInitializer: InitializeTestSuite,
		ScenarioInitializer:  InitializeScenario,
		Options:              &o,
	}
	// Open the devnets the selected scenarios need concurrently, up front
	// (SEGDIFF_PREFETCH=0 opens each when a scenario first needs it).
	fmt.Fprintf(os.Stderr, "segdiff: %d scenarios selected by %q, %d run on the %s backend; opening devnets\n",
		len(plan.Scenarios), o.Tags, len(plan.Runnable()), cfg.Backend)
	suite.Prefetch(plan)
	suiteRan = true
	status := ts.Run()
	// TestMain prints the tally and the report path (printOutcome).
	if _, err := suite.Finish(); err != nil {
		t.Errorf("segdiff: %v", err)
	}
	if err := suite.Outcome(); err != nil {
		t.Fatalf("segdiff: %v", err)
	}
	if status != 0 {
		t.Fatalf("godog suite failed with status %d (tags %q)", status, o.Tags)
	}
}
