package segdiff_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cucumber/godog"

	"github.com/segdiff/segdiff/steps"
)

// This file is the suite's two entry points as the test binary runs them —
// go test's TestFeatures (make e2e) and the runner the godog CLI generates —
// with what the binary needs around them (TestMain, its one signal
// listener) and the tests that run the binary itself as each entry point.

// cliEnv makes this test binary behave as the runner the godog CLI
// generates from this package (`godog run ...`): the same TestSuite with
// nil Options, so that godog parses the CLI's arguments itself.
const cliEnv = "SEGDIFF_TEST_AS_GODOG_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(cliEnv) == "1" {
		os.Exit(godog.TestSuite{Name: "segdiff", TestSuiteInitializer: InitializeTestSuite, ScenarioInitializer: InitializeScenario}.Run())
	}
	listenForInterrupts()
	code := m.Run()
	printOutcome(os.Stdout) // the report path is the last line make e2e prints
	os.Exit(code)
}

// interrupts owns SIGINT and SIGTERM for the test binary's whole life. A
// test running something that must stop cleanly (the suite's devnets, the
// broken-network check's child suite) claims them; between such tests a
// signal ends the binary at once with 130, so that no later test starts
// after a Ctrl-C. Go keeps a signal ignored when the parent ignored it (a
// background job of a non-interactive shell), so listening is also what
// makes such a run honour Ctrl-C at all.
var interrupts struct {
	mu      sync.Mutex
	handler func(os.Signal)
}

// listenForInterrupts starts the binary's one signal listener.
func listenForInterrupts() {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		for sig := range ch {
			interrupts.mu.Lock()
			h := interrupts.handler
			interrupts.mu.Unlock()
			if h == nil {
				fmt.Fprintf(os.Stderr, "segdiff: %v: interrupted between tests; exit 130\n", sig)
				os.Exit(130)
			}
			h(sig)
		}
	}()
}

// claimInterrupts routes signals to h (which must return at once) until
// release is called.
func claimInterrupts(h func(os.Signal)) (release func()) {
	interrupts.mu.Lock()
	interrupts.handler = h
	interrupts.mu.Unlock()
	return func() {
		interrupts.mu.Lock()
		interrupts.handler = nil
		interrupts.mu.Unlock()
	}
}

// runSelf runs this test binary with args and env and returns its exit
// code and combined output.
func runSelf(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%v timed out:\n%s", args, out)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, string(out)
}

// entryPointTest skips a test that runs this binary as the suite's entry
// points: under -short (make test's quick runs), and inside such a run.
func entryPointTest(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the suite's entry points as subprocesses")
	}
	if os.Getenv(cliEnv) != "" || os.Getenv("SEGDIFF_E2E") != "" {
		t.Skip("inside a subprocess of this test")
	}
}

const typoFeature = `@embedded
Feature: a feature with a typo
  Scenario: undefined given
    Given a segmneted devnet
    When the devnet has revealed 3 warm payloads
    Then the PTC votes payload present in every warm slot
`

// impossibleFeature selects a devnet the run spec refuses: a whole payload
// is one message, so the builder cannot omit a part of it.
const impossibleFeature = `@embedded
Feature: a devnet the run spec refuses
  Scenario: omit on whole payloads
    Given a whole devnet under stress "omit=1"
    When the devnet has revealed 3 warm payloads
    Then the PTC votes payload present in every warm slot
`

// The suite must fail, with its cause and before any devnet opens, on every
// input that would make it check nothing; these cases run the real entry
// points: `make e2e`'s TestFeatures and the godog CLI's runner.
func TestEntryPointsFailClosed(t *testing.T) {
	entryPointTest(t)
	dir := t.TempDir()
	feature, impossible := filepath.Join(dir, "typo.feature"), filepath.Join(dir, "impossible.feature")
	for path, body := range map[string]string{feature: typoFeature, impossible: impossibleFeature} {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goTest := func(extra ...string) []string {
		return append([]string{"-test.run=^TestFeatures$", "-test.count=1"}, extra...)
	}
	tests := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{name: "go test: typo'd tag", env: []string{"SEGDIFF_E2E=1"}, args: goTest("-godog.tags=@embeded && ~@slow"),
			want: "names @embeded, which no feature"},
		{name: "go test: typo'd backend", env: []string{"SEGDIFF_E2E=1", "DEVNET=kurtsis"}, args: goTest(),
			want: `unknown devnet backend "kurtsis"`},
		{name: "go test: another backend's tag", env: []string{"SEGDIFF_E2E=1"}, args: goTest("-godog.tags=@kurtosis"),
			want: "would all be skipped on the embedded backend"},
		{name: "go test: kurtosis without an enclave", env: []string{"SEGDIFF_E2E=1", "DEVNET=kurtosis", "SEGDIFF_ENDPOINTS=/nonexistent/endpoints.json"}, args: goTest(),
			want: "read endpoints"},
		{name: "go test: undefined step", env: []string{"SEGDIFF_E2E=1"}, args: goTest("-godog.tags=@embedded", feature),
			want: `undefined steps (steps/SYNTAX.md lists the sentences)`},
		{name: "go test: a devnet the run spec refuses", env: []string{"SEGDIFF_E2E=1"}, args: goTest("-godog.tags=@embedded", impossible),
			want: `Given a whole devnet under stress "omit=1": invalid embedded config: stress: omit=1 in mode whole, whose payload is one message`},
		{name: "go test: misspelled budget", env: []string{"SEGDIFF_E2E=1", "SEGDIFF_BUDGET_COMPLETON_P50=1s"}, args: goTest(),
			want: "SEGDIFF_BUDGET_COMPLETON_P50 is not a budget"},
		{name: "go test: malformed tag filter", env: []string{"SEGDIFF_E2E=1"}, args: goTest("-godog.tags=@embedded &&"),
			want: `tag filter "@embedded &&" has an empty term`},
		{name: "go test: unknown preset", env: []string{"SEGDIFF_E2E=1", "SEGDIFF_PRESET=bogus"}, args: goTest(),
			want: `SEGDIFF_PRESET="bogus": unknown embedded preset "bogus"`},
		{name: "go test: unknown scrape mode", env: []string{"SEGDIFF_E2E=1", "SEGDIFF_SCRAPE=bogus"}, args: goTest(),
			want: `SEGDIFF_SCRAPE="bogus": want direct or promql`},
		{name: "go test: negative prefetch", env: []string{"SEGDIFF_E2E=1", "SEGDIFF_PREFETCH=-1"}, args: goTest(),
			want: `SEGDIFF_PREFETCH="-1": want 0`},
		{name: "go test: zero poll interval", env: []string{"SEGDIFF_E2E=1", "SEGDIFF_POLL_INTERVAL=0s"}, args: goTest(),
			want: `SEGDIFF_POLL_INTERVAL="0s": want a duration above 0`},
		{name: "go test: zero wait timeout", env: []string{"SEGDIFF_E2E=1", "SEGDIFF_WAIT_TIMEOUT=0s"}, args: goTest(),
			want: `SEGDIFF_WAIT_TIMEOUT="0s": want a duration above 0`},
		{name: "go test: malformed seed", env: []string{"SEGDIFF_E2E=1", "SEGDIFF_SEED=seven"}, args: goTest(),
			want: `SEGDIFF_SEED="seven": not an integer`},
		{name: "go test: run id with a slash", env: []string{"SEGDIFF_E2E=1", "SEGDIFF_RUN_ID=a/b"}, args: goTest(),
			want: `SEGDIFF_RUN_ID="a/b"`},
		{name: "go test: slow as a word", env: []string{"SEGDIFF_E2E=1", "SEGDIFF_SLOW=yes"}, args: goTest(),
			want: `SEGDIFF_SLOW="yes": want 1 (on) or 0 (off)`},
		{name: "go test: e2e as a word", env: []string{"SEGDIFF_E2E=true"}, args: goTest(),
			want: `SEGDIFF_E2E="true": want 1`},
		{name: "go test: misspelled variable", env: []string{"SEGDIFF_E2E=1", "SEGDIFF_PRESTE=ci"}, args: goTest(),
			want: "SEGDIFF_PRESTE is not a segdiff variable; did you mean SEGDIFF_PRESET?"},
		{name: "godog CLI: malformed tag filter", env: []string{cliEnv + "=1"}, args: []string{"--tags=@embedded &&", "features/"},
			want: `tag filter "@embedded &&" has an empty term`},
		{name: "godog CLI: unknown scrape mode", env: []string{cliEnv + "=1", "SEGDIFF_SCRAPE=bogus"}, args: []string{"features/"},
			want: `SEGDIFF_SCRAPE="bogus": want direct or promql`},
		{name: "godog CLI: typo'd tag", env: []string{cliEnv + "=1"}, args: []string{"--tags=@embeded", "features/"},
			want: "names @embeded, which no feature"},
		{name: "godog CLI: undefined step, not strict", env: []string{cliEnv + "=1"}, args: []string{feature},
			want: "undefined steps"},
		{name: "godog CLI: typo'd backend", env: []string{cliEnv + "=1", "DEVNET=kurtsis"}, args: []string{"features/"},
			want: `unknown devnet backend "kurtsis"`},
		{name: "godog CLI: nothing selected", env: []string{cliEnv + "=1"}, args: []string{"--tags=@kurtosis && @slow", "features/"},
			want: "selects no scenario"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reports := t.TempDir()
			start := time.Now()
			code, out := runSelf(t, append(tc.env, "SEGDIFF_REPORTS_DIR="+reports), tc.args...)
			if code == 0 {
				t.Fatalf("exit 0 (a pass); want a failure naming %q:\n%s", tc.want, out)
			}
			if !strings.Contains(out, tc.want) {
				t.Fatalf("exit %d without %q:\n%s", code, tc.want, out)
			}
			if strings.Contains(out, "opened embedded devnet") || strings.Contains(out, "building the segdiff CLI") {
				t.Errorf("a devnet was opened before the failure:\n%s", out)
			}
			if strings.Contains(out, "panic:") || strings.Contains(out, "goroutine ") {
				t.Errorf("a panic instead of an error:\n%s", out)
			}
			if entries, _ := os.ReadDir(reports); len(entries) != 0 {
				t.Errorf("reports dir holds %v after a failed preflight", entries)
			}
			t.Logf("exit %d after %v", code, time.Since(start).Round(time.Millisecond))
		})
	}
}

// outcomeFeature needs no devnet: one scenario fails before any devnet is
// asked for, the other is skipped on the embedded backend.
const outcomeFeature = `@outcome
Feature: an outcome without a devnet
  Scenario: a check before any devnet
    When the devnet has revealed 3 warm payloads

  @kurtosis
  Scenario: a Kurtosis check
    Given a segmented devnet
    When the devnet has revealed 3 warm payloads
`

// Both entry points end with the suite's own tally (a skip with its
// reason, not a pass) and then the report's path: under make e2e's go test
// run as the very last line, below go test's own lines; under the godog
// CLI's runner after every scenario, before godog's summary, which counts
// the skipped scenario as passed.
func TestEntryPointsEndWithTallyAndReportPath(t *testing.T) {
	entryPointTest(t)
	feature := filepath.Join(t.TempDir(), "outcome.feature")
	if err := os.WriteFile(feature, []byte(outcomeFeature), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		env      []string
		args     []string
		pathLast bool // the report path is the output's last line
	}{
		{name: "make e2e (go test)", env: []string{"SEGDIFF_E2E=1"},
			args: []string{"-test.run=^TestFeatures$", "-test.v", "-test.count=1", "-godog.tags=@outcome", feature}, pathLast: true},
		{name: "godog CLI", env: []string{cliEnv + "=1"}, args: []string{feature}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reports := t.TempDir()
			code, out := runSelf(t, append(tc.env, "SEGDIFF_REPORTS_DIR="+reports), tc.args...)
			if code == 0 {
				t.Fatalf("exit 0 with a failed scenario:\n%s", out)
			}
			if strings.Contains(out, "opened embedded devnet") {
				t.Fatalf("a devnet was opened:\n%s", out)
			}
			m := regexp.MustCompile(`(?m)^report: (\S+)$`).FindAllStringSubmatchIndex(out, -1)
			if len(m) != 1 {
				t.Fatalf("want one report line, found %d:\n%s", len(m), out)
			}
			path, at := out[m[0][2]:m[0][3]], m[0][0]
			if _, err := os.Stat(path); err != nil || !strings.HasPrefix(path, reports) {
				t.Errorf("report line names %s (%v), want a summary.md under %s", path, err, reports)
			}
			start := strings.LastIndex(out[:at], "FAILED   a check before any devnet")
			if start < 0 {
				t.Fatalf("no tally before the report line:\n%s", out)
			}
			for _, want := range []string{"no devnet selected", "SKIPPED  a Kurtosis check", "not tagged @embedded",
				"scenarios: 0 passed, 1 failed, 1 skipped"} {
				if !strings.Contains(out[start:at], want) {
					t.Errorf("the tally before the report line lacks %q:\n%s", want, out)
				}
			}
			if tc.pathLast && strings.TrimRight(out[at:], "\n") != "report: "+path {
				t.Errorf("the report line is not the last line:\n%s", out)
			}
			t.Logf("ends with:\n%s", tail(out, 8))
		})
	}
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// TestBrokenNetworkFailsTheSuite runs the @broken scenarios of
// stress.feature — ordinary budget checks on a network the design says
// must fail (segments without a code, the source omitting parts) — as the
// suite runs any scenario, and requires the suite to fail naming the
// stranded nodes, slots and parts held: proof that it fails closed on a
// broken network. It opens devnets, so it runs with make e2e
// (SEGDIFF_E2E=1), not make test, and only on a backend that runs @broken
// scenarios (the embedded one: a Kurtosis enclave's network is what its
// params made it).
//
// Ctrl-C while it runs stops the child suite cleanly and ends this binary
// with 130, so that no later test starts.
func TestBrokenNetworkFailsTheSuite(t *testing.T) {
	if os.Getenv("SEGDIFF_E2E") != "1" || os.Getenv(brokenEnv) != "" {
		t.Skip("set SEGDIFF_E2E=1 (make e2e) to run the broken-network check")
	}
	backend := suite.Config().Backend
	probe := steps.New(steps.Config{Backend: backend, Broken: true, Log: io.Discard})
	plan, err := probe.Plan(godog.Options{Paths: []string{"features"}, Tags: steps.TagBroken})
	if err != nil {
		t.Fatalf("plan the @broken scenarios: %v", err)
	}
	if len(plan.Scenarios) == 0 {
		t.Fatal("no scenario in features/ is tagged @broken: the broken-network check would check nothing")
	}
	if len(plan.Runnable()) == 0 {
		t.Skipf("none of the %d @broken scenarios runs on the %s backend (%s); the broken-network check runs on the embedded devnet",
			len(plan.Scenarios), backend, plan.Scenarios[0].Skip)
	}
	// Not t.TempDir: an interrupt ends the binary with os.Exit, which runs
	// no cleanup.
	reports, err := os.MkdirTemp("", "segdiff-broken-reports-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(reports)
	code, out, sig := runChildSuite(t, []string{brokenEnv + "=1", "SEGDIFF_REPORTS_DIR=" + reports},
		"-test.run=^TestFeatures$", "-test.count=1", "-godog.tags="+steps.TagBroken)
	if sig != nil {
		os.RemoveAll(reports)
		fmt.Fprintf(os.Stderr, "segdiff: %v: the broken-network check's suite stopped (exit %d); exit 130\n", sig, code)
		os.Exit(130)
	}
	switch code {
	case 0:
		t.Fatalf("the suite passed on a broken network:\n%s", out)
	case 130:
		t.Fatalf("the broken-network suite was interrupted (exit 130), so it proved nothing:\n%s", out)
	}
	var missing []string
	for _, want := range []string{"completion from reveal", "nodes never completed", "never completed slots 2 (holding", "of 23 parts)"} {
		if !strings.Contains(out, want) {
			missing = append(missing, fmt.Sprintf("%q", want))
		}
	}
	if len(missing) > 0 {
		t.Fatalf("the suite failed (exit %d), but not as a broken network must: its output lacks %s:\n%s", code, strings.Join(missing, ", "), out)
	}
	t.Logf("the suite failed on the broken network as it must (exit %d), naming the stranded nodes", code)
}

// runChildSuite runs this test binary with args and env, as the broken-network
// check's child suite, and returns its exit code and combined output. A
// SIGINT or SIGTERM this binary receives meanwhile is forwarded to the
// child's process group, the child is waited for while it cleans up, and the
// signal is returned.
func runChildSuite(t *testing.T, env []string, args ...string) (code int, out string, sig os.Signal) {
	t.Helper()
	var buf lockedBuffer
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = &buf, &buf
	cmd.SysProcAttr = childAttr()
	signals := make(chan os.Signal, 4)
	release := claimInterrupts(func(s os.Signal) {
		select {
		case signals <- s:
		default:
		}
	})
	defer release()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the child suite: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timeout := time.NewTimer(childSuiteTimeout)
	defer timeout.Stop()
	var err error
wait:
	for {
		select {
		case err = <-done:
			break wait
		case s := <-signals:
			if sig == nil {
				sig = s
				fmt.Fprintf(os.Stderr, "segdiff: %v: stopping the broken-network check's suite\n", s)
			}
			signalGroup(cmd.Process, s)
		case <-timeout.C:
			signalGroup(cmd.Process, syscall.SIGKILL)
			<-done
			t.Fatalf("the child suite ran over %v and was killed:\n%s", childSuiteTimeout, buf.String())
		}
	}
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
		if code < 0 { // killed by a signal
			code = 128 + int(ee.Sys().(syscall.WaitStatus).Signal())
		}
	} else if err != nil {
		t.Fatalf("wait for the child suite: %v", err)
	}
	return code, buf.String(), sig
}

// childSuiteTimeout bounds the broken-network check's suite (10-40 s on
// the 2-core machine).
const childSuiteTimeout = 10 * time.Minute

// signalGroup sends s to p's process group (where childAttr gave it one),
// so that the simulations it started get it too, as from a terminal.
func signalGroup(p *os.Process, s os.Signal) {
	if n, ok := s.(syscall.Signal); ok && childAttr() != nil && childAttr().Setpgid {
		if syscall.Kill(-p.Pid, n) == nil {
			return
		}
	}
	_ = p.Signal(s)
}

// lockedBuffer collects a child's stdout and stderr, written concurrently.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// brokenEnv marks the subprocess of TestBrokenNetworkFailsTheSuite.
const brokenEnv = "SEGDIFF_TEST_BROKEN"
