package segdiff_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cucumber/godog"
	"github.com/cucumber/godog/colors"

	// Backends register themselves with devnet.Register.
	_ "github.com/segdiff/segdiff/devnet/kurtosis"
	_ "github.com/segdiff/segdiff/embedded"
	"github.com/segdiff/segdiff/steps"
)

// suite is shared by TestFeatures and by the runner the godog CLI generates
// from this file's InitializeTestSuite and InitializeScenario.
var suite = newSuite()

// opts holds godog's options; -godog.* flags (e.g. -godog.tags='@slow')
// override the defaults set here.
var opts = godog.Options{
	Output: colors.Colored(os.Stdout),
	Paths:  []string{"features"},
	Strict: true,
}

func init() {
	cfg := suite.Config()
	dir := filepath.Join(reportsDir(cfg), cfg.RunID)
	opts.Format = fmt.Sprintf("pretty,junit:%s,cucumber:%s", filepath.Join(dir, "junit.xml"), filepath.Join(dir, "cucumber.json"))
	opts.Tags = "@embedded && ~@slow"
	if cfg.Backend != "embedded" {
		opts.Tags = "@" + cfg.Backend + " && ~@slow"
	}
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

func reportsDir(cfg steps.Config) string {
	if cfg.ReportsDir == "" {
		return os.TempDir()
	}
	return cfg.ReportsDir
}

// InitializeTestSuite registers the suite hooks (devnet cache, report).
func InitializeTestSuite(ctx *godog.TestSuiteContext) { suite.InitializeTestSuite(ctx) }

// InitializeScenario registers the scenario hooks and every step.
func InitializeScenario(ctx *godog.ScenarioContext) { suite.InitializeScenario(ctx) }

// TestFeatures runs features/ against the backend named by DEVNET (default
// embedded). It skips unless SEGDIFF_E2E=1, so go test ./... stays fast.
func TestFeatures(t *testing.T) {
	if os.Getenv("SEGDIFF_E2E") != "1" {
		t.Skip("set SEGDIFF_E2E=1 to run the Gherkin suite against a devnet (make e2e)")
	}
	cfg := suite.Config()
	if err := os.MkdirAll(filepath.Join(reportsDir(cfg), cfg.RunID), 0o755); err != nil {
		t.Fatal(err)
	}
	if tags := opts.Tags; strings.Contains(tags, "@slow") && !strings.Contains(tags, "~@slow") {
		suite.SetSlow(true)
		// Two 500-node simulations at once would need twice the memory;
		// open them one after the other unless told otherwise.
		if os.Getenv("SEGDIFF_PREFETCH") == "" {
			suite.SetPrefetch(1)
		}
	}
	o := opts
	o.TestingT = t
	if flag.NArg() > 0 {
		o.Paths = flag.Args()
	}
	ts := godog.TestSuite{
		Name:                 "segdiff",
		TestSuiteInitializer: InitializeTestSuite,
		ScenarioInitializer:  InitializeScenario,
		Options:              &o,
	}
	// Open the devnets the selected scenarios need concurrently, up front
	// (SEGDIFF_PREFETCH=0 opens each when a scenario first needs it).
	plan, err := steps.Plan(ts)
	if err != nil {
		t.Fatal(err)
	}
	suite.Prefetch(plan)
	status := ts.Run()
	if w := suite.Written(); w.Dir != "" {
		t.Logf("report: %s", w.Dir)
	}
	if status != 0 {
		t.Fatalf("godog suite failed with status %d (tags %q)", status, o.Tags)
	}
}
