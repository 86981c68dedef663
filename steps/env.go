package steps

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/suggest"
)

// EnvPrefix starts every segdiff environment variable (DEVNET aside). A set
// variable with this prefix that EnvVars does not list is an error: a
// mistyped name would otherwise be ignored without a word. So is a set
// variable one edit from a listed one without the prefix (DEVNT, devnet),
// nearer than which no other program's variable is likely to come.
const EnvPrefix = "SEGDIFF_"

// plainTypoEdits is how far a variable may be from DEVNET (or another
// listed name without EnvPrefix) and still be taken for its typo.
const plainTypoEdits = 1

// EnvVar is one environment variable read by the suite, by what runs it
// (make e2e, the backends, the Starlark tests) or by the suite's own tests.
type EnvVar struct {
	Name string
	// Default is what leaving the variable unset means.
	Default string
	// Doc says what the variable does.
	Doc string
	// Internal marks variables only the suite's own tests set; the
	// documentation does not list them.
	Internal bool
	// emptyOK allows a set but empty value (it means something of its own);
	// any other variable set to "" is an error.
	emptyOK bool
	// parse checks a set value and, for the suite's own settings, stores it
	// in c. EnvVars parses in list order: SEGDIFF_PRESET's names depend on
	// DEVNET's backend, which comes first.
	parse func(c *Config, v string) error
}

// defaultBackend is the backend of an unset DEVNET.
const defaultBackend = "embedded"

// EnvVars lists every variable: the fixed ones, then one
// SEGDIFF_BUDGET_<KEY> per budget in Budgets, sorted. ConfigFromEnv reads
// the suite's settings through it, CheckEnv checks every set one, and
// features/README.md's variable tables are generated from it (EnvMarkdown).
func EnvVars() []EnvVar {
	vars := []EnvVar{
		{Name: "SEGDIFF_E2E", Default: "unset", Doc: "`1` runs `TestFeatures` (make e2e sets it); `0` or unset skips it", parse: flag01(nil)},
		{Name: "DEVNET", Default: "`" + defaultBackend + "`", Doc: "backend: `embedded` or `kurtosis`", parse: parseBackend},
		{Name: "SEGDIFF_PRESET", Default: "`ci` (embedded)", Doc: "preset for \"Given a <mode> devnet\" (embedded: `ci`, `study-500`, `study-500-dc20` or `study-500-dc20-dcb`; Kurtosis: the params file the enclave was started with)", parse: parsePreset},
		{Name: "SEGDIFF_SEED", Default: "backend default", Doc: "devnet seed (an integer other than 0, which stands for the default)", parse: parseSeed},
		{Name: "SEGDIFF_SLOW", Default: "unset", Doc: "`1` runs `@slow` scenarios", parse: flag01(func(c *Config, on bool) { c.Slow = on })},
		{Name: "SEGDIFF_EXTENDED", Default: "unset", Doc: "`1` runs `@extended` scenarios", parse: flag01(func(c *Config, on bool) { c.Extended = on })},
		{Name: "SEGDIFF_SCRAPE", Default: "`" + ScrapeDirect + "`", Doc: "`direct` scrapes every node's /metrics; `promql` asks the devnet's Prometheus", parse: parseScrape},
		{Name: "SEGDIFF_PREFETCH", Default: "`2`", Doc: "devnets opened concurrently before the scenarios start; `0` opens each on first use", parse: parsePrefetch},
		{Name: "SEGDIFF_POLL_INTERVAL", Default: "`1s`", Doc: "re-read interval while waiting for warm slots (a duration above 0)", parse: positiveDuration(func(c *Config, d time.Duration) { c.PollInterval = d })},
		{Name: "SEGDIFF_WAIT_TIMEOUT", Default: "(slots+3) slots + 2 min", Doc: "how long to wait for warm slots (a duration above 0)", parse: positiveDuration(func(c *Config, d time.Duration) { c.WaitTimeout = d })},
		{Name: "SEGDIFF_REPORT_PAUSE", Default: "`0s`", Doc: "hold the report open this long before writing it, interruptible (make check-interrupt presses Ctrl-C then)", parse: nonNegativeDuration(func(c *Config, d time.Duration) { c.ReportPause = d })},
		{Name: "SEGDIFF_REPORTS_DIR", Default: "`reports`", Doc: "where `<run-id>/` and `latest` go; empty writes no report", emptyOK: true, parse: parseReportsDir},
		{Name: "SEGDIFF_RUN_ID", Default: "UTC time `20060102T150405Z`", Doc: "report directory name (one path element, not `latest`)", parse: parseRunID},
		{Name: "SEGDIFF_BIN", Default: "built on demand", Doc: "prebuilt `segdiff` binary for the embedded backend (make e2e sets it)", parse: parseExecutable},
		{Name: "SEGDIFF_ENDPOINTS", Default: "`.devnet/<enclave>/endpoints.json`", Doc: "the Kurtosis enclave's endpoints file (read and checked by the kurtosis backend's preflight)", parse: func(*Config, string) error { return nil }},
		{Name: "SEGDIFF_ENCLAVE", Default: "`segdiff`", Doc: "the Kurtosis enclave whose endpoints file the kurtosis backend reads", parse: parseEnclave},
		{Name: "SEGDIFF_PACKAGE_SOURCES", Default: "unset", Doc: "a directory of ethereum-package's and its imports' source archives with their `SHA256SUMS`: `segdiff devnet up` (`make devnet-up`) runs them instead of cloning from GitHub (its `--package-sources`; see `internal/devnet/kurtosis/README.md`)", parse: parseDir},
		{Name: "SEGDIFF_ETHPKG_DIR", Default: "unset", Doc: "a checkout of ethereum-package at the pinned commit: `internal/starlarktest` then runs the real package (see `kurtosis/README.md`)", parse: parseDir},
		{Name: "SEGDIFF_TEST_AS_GODOG_CLI", Internal: true, Doc: "entry_test.go: the test binary acts as the godog CLI's runner", parse: flag01(nil)},
		{Name: "SEGDIFF_TEST_BROKEN", Internal: true, Doc: "entry_test.go: marks TestBrokenNetworkFailsTheSuite's subprocess", parse: flag01(nil)},
	}
	for _, k := range budgetKeys() {
		b := Budgets[k]
		vars = append(vars, EnvVar{Name: BudgetEnvPrefix + k, Default: "the feature's value", Doc: b.Doc, parse: func(_ *Config, v string) error {
			_, err := parseBudget(v, b.Unit)
			return err
		}})
	}
	return vars
}

// CheckEnv checks environ (os.Environ form) as ConfigFromEnv reads it:
// every set variable of EnvVars must parse, and every set SEGDIFF_
// variable must be one of them. All problems are returned in one error.
func CheckEnv(environ []string) error {
	var c Config
	return applyEnv(&c, environ)
}

// applyEnv parses the variables of environ into c and returns every
// problem, sorted, as one line.
func applyEnv(c *Config, environ []string) error {
	vars := EnvVars()
	listed := map[string]bool{}
	var names, budgets, plain []string
	for _, v := range vars {
		listed[v.Name] = true
		names = append(names, v.Name)
		if strings.HasPrefix(v.Name, BudgetEnvPrefix) {
			budgets = append(budgets, v.Name)
		}
		if !strings.HasPrefix(v.Name, EnvPrefix) {
			plain = append(plain, v.Name)
		}
	}
	set := map[string]string{}
	var problems []string
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		switch {
		case listed[name]:
			set[name] = value
		case strings.HasPrefix(name, BudgetEnvPrefix):
			problems = append(problems, fmt.Sprintf("%s is not a budget%s", name, orList(suggest.DidYouMean(name, budgets, ""), budgets)))
		case strings.HasPrefix(name, EnvPrefix):
			problems = append(problems, fmt.Sprintf("%s is not a segdiff variable%s", name, orHint(suggest.DidYouMean(name, names, ""), "features/README.md lists them")))
		default:
			if near, ok := suggest.Within(strings.ToUpper(name), plain, plainTypoEdits); ok {
				problems = append(problems, fmt.Sprintf("%s is not a segdiff variable; did you mean %s?", name, near))
			}
		}
	}
	for _, v := range vars {
		value, ok := set[v.Name]
		switch {
		case !ok:
		case value == "" && !v.emptyOK:
			problems = append(problems, fmt.Sprintf("%s is set but empty (unset it for the default: %s)", v.Name, strings.ReplaceAll(v.Default, "`", "")))
		default:
			if err := v.parse(c, value); err != nil {
				problems = append(problems, fmt.Sprintf("%s=%q: %v", v.Name, value, err))
			}
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return fmt.Errorf("check environment: %s", strings.Join(problems, "; "))
	}
	return nil
}

// orList is the suggestion, or the list of known names when there is none.
func orList(suggestion string, known []string) string {
	return orHint(suggestion, "known: "+strings.Join(known, ", "))
}

func orHint(suggestion, hint string) string {
	if suggestion != "" {
		return suggestion
	}
	return " (" + hint + ")"
}

// EnvMarkdown renders the variable tables of features/README.md: the
// budget overrides, then every other variable that is not Internal.
func EnvMarkdown() string {
	var b strings.Builder
	b.WriteString("Every set variable is checked before any devnet opens: a malformed value, or a `" + EnvPrefix +
		"` variable not listed here, fails the run with its name (and the nearest known name).\n\n")
	b.WriteString("| variable | bounds |\n|---|---|\n")
	vars := EnvVars()
	for _, v := range vars {
		if strings.HasPrefix(v.Name, BudgetEnvPrefix) {
			fmt.Fprintf(&b, "| `%s` | %s |\n", v.Name, v.Doc)
		}
	}
	b.WriteString("\nOther variables:\n\n| variable | default | what |\n|---|---|---|\n")
	for _, v := range vars {
		if !strings.HasPrefix(v.Name, BudgetEnvPrefix) && !v.Internal {
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", v.Name, v.Default, v.Doc)
		}
	}
	return b.String()
}

// flag01 accepts "1" (on) or "0" (off) and hands the value to set, if any.
func flag01(set func(c *Config, on bool)) func(*Config, string) error {
	return func(c *Config, v string) error {
		if v != "0" && v != "1" {
			return fmt.Errorf("want 1 (on) or 0 (off)")
		}
		if set != nil {
			set(c, v == "1")
		}
		return nil
	}
}

func positiveDuration(set func(c *Config, d time.Duration)) func(*Config, string) error {
	return duration(false, set)
}

func nonNegativeDuration(set func(c *Config, d time.Duration)) func(*Config, string) error {
	return duration(true, set)
}

// duration parses a duration above 0 (or at least 0, zeroOK) into set.
func duration(zeroOK bool, set func(c *Config, d time.Duration)) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		switch {
		case err != nil:
			return fmt.Errorf("not a duration (e.g. 1s, 500ms)")
		case d < 0 || d == 0 && !zeroOK:
			if zeroOK {
				return fmt.Errorf("want a duration of 0 or more")
			}
			return fmt.Errorf("want a duration above 0")
		}
		set(c, d)
		return nil
	}
}

func parseBackend(c *Config, v string) error {
	if err := devnet.Known(v); err != nil {
		return fmt.Errorf("%w%s", err, suggest.DidYouMean(v, devnet.Backends(), ""))
	}
	c.Backend = v
	return nil
}

func parsePreset(c *Config, v string) error {
	backend := c.Backend
	if backend == "" {
		backend = defaultBackend
	}
	// An unknown backend is DEVNET's problem, reported on its own.
	if devnet.Known(backend) == nil {
		if err := devnet.CheckConfig(backend, devnet.Config{Preset: v}); err != nil {
			return err
		}
	}
	c.Preset = v
	return nil
}

func parseSeed(c *Config, v string) error {
	seed, err := strconv.ParseInt(v, 10, 64)
	switch {
	case err != nil:
		return fmt.Errorf("not an integer")
	case seed == 0:
		return fmt.Errorf("0 stands for the backend's default seed; unset the variable for it")
	}
	c.Seed = seed
	return nil
}

func parseScrape(c *Config, v string) error {
	modes := []string{ScrapeDirect, ScrapePromQL}
	if v != ScrapeDirect && v != ScrapePromQL {
		return fmt.Errorf("want %s or %s%s", ScrapeDirect, ScrapePromQL, suggest.DidYouMean(v, modes, ""))
	}
	c.Reader = ScrapeReader{Mode: v}
	return nil
}

func parsePrefetch(c *Config, v string) error {
	n, err := strconv.Atoi(v)
	switch {
	case err != nil:
		return fmt.Errorf("not an integer")
	case n < 0:
		return fmt.Errorf("want 0 (open each devnet on first use) or more")
	}
	c.Prefetch = n
	return nil
}

func parseReportsDir(c *Config, v string) error {
	if v != "" {
		if fi, err := os.Stat(v); err == nil && !fi.IsDir() {
			return fmt.Errorf("exists and is not a directory")
		}
	}
	c.ReportsDir = v
	return nil
}

func parseRunID(c *Config, v string) error {
	// The ID is one directory under the reports folder, beside the latest
	// link and the hidden staging folders.
	if filepath.Base(v) != v || v == ".." || v == "latest" || strings.HasPrefix(v, ".") {
		return fmt.Errorf("want one path element, not latest and not starting with a dot")
	}
	c.RunID = v
	return nil
}

func parseExecutable(_ *Config, v string) error {
	fi, err := os.Stat(v)
	switch {
	case err != nil:
		return err
	case fi.IsDir() || fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("not an executable file")
	}
	return nil
}

func parseEnclave(_ *Config, v string) error {
	// The name is a folder of .devnet/.
	if filepath.Base(v) != v || v == "." || v == ".." {
		return fmt.Errorf("want an enclave name, not a path")
	}
	return nil
}

func parseDir(_ *Config, v string) error {
	fi, err := os.Stat(v)
	switch {
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("not a directory")
	}
	return nil
}
