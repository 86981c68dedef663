package main

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/internal/racedetector"
)

// Every argument error of every subcommand is one line naming the flag or
// argument and the cause, with a suggestion for a typo and a hint to
// --help, exit 2, and nothing started or written.
func TestArgumentErrors(t *testing.T) {
	dir := t.TempDir()
	grid := repoFile("sweeps/smoke.yaml")
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	mergeOut := filepath.Join(dir, "merged")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{name: "no command", args: nil, want: []string{"segdiff: no command given (one of devnet, load, params, patches, sim, sweep)", "see 'segdiff --help'"}},
		{name: "typo'd command", args: []string{"swep"}, want: []string{`unknown command "swep"`, "did you mean sweep?"}},

		{name: "sim: typo'd flag", args: []string{"sim", "--nodse", "3"}, want: []string{"segdiff sim: flag provided but not defined: -nodse; did you mean -nodes?", "see 'segdiff sim --help'"}},
		{name: "sim: empty mode", args: []string{"sim", "--mode", ""}, want: []string{"-mode: empty"}},
		{name: "sim: empty seed", args: []string{"sim", "--seed", ""}, want: []string{"-seed: empty"}},
		{name: "sim: empty preset", args: []string{"sim", "--preset", ""}, want: []string{"--preset given an empty value"}},
		{name: "sim: empty link class", args: []string{"sim", "--node-class", ""}, want: []string{"-node-class: empty"}},
		{name: "sim: stray argument", args: []string{"sim", "segmented"}, want: []string{`unexpected argument "segmented"`}},
		{name: "sim: --json into a missing folder", args: []string{"sim", "--json", "/nonexistent/dir/x.json"}, want: []string{"--json /nonexistent/dir/x.json: directory /nonexistent/dir: no such file or directory"}},
		{name: "sim: --endpoints into a missing folder", args: []string{"sim", "--endpoints", "/nonexistent/dir/e.json"}, want: []string{"--endpoints /nonexistent/dir/e.json: directory /nonexistent/dir"}},
		{name: "sim: --cpuprofile into a missing folder", args: []string{"sim", "--cpuprofile", "/nonexistent/dir/cpu.prof"}, want: []string{"--cpuprofile /nonexistent/dir/cpu.prof: directory /nonexistent/dir"}},
		{name: "sim: --memprofile onto a folder", args: []string{"sim", "--memprofile", dir}, want: []string{"--memprofile " + dir + ": is a directory"}},
		{name: "sim: --json beside a file", args: []string{"sim", "--json", filepath.Join(grid, "x.json")}, want: []string{"smoke.yaml is not a directory"}},
		{name: "sim: malformed --serve", args: []string{"sim", "--serve", "bogus:addr:1"}, want: []string{`--serve "bogus:addr:1"`, "too many colons"}},
		{name: "sim: --serve on a busy port", args: []string{"sim", "--serve", busy.Addr().String()}, want: []string{"--serve " + busy.Addr().String(), "address already in use"}},

		{name: "sweep: no grid", args: []string{"sweep"}, want: []string{"segdiff sweep: no grid file given", "plan, cell, merge, compare"}},
		{name: "sweep: no --out", args: []string{"sweep", grid}, want: []string{"--out DIR is required"}},
		{name: "sweep: --jobs 0", args: []string{"sweep", "--jobs", "0", "--out", mergeOut, grid}, want: []string{"--jobs 0: want 1 or more"}},
		{name: "sweep: --jobs -3", args: []string{"sweep", "--jobs", "-3", "--out", mergeOut, grid}, want: []string{"--jobs -3: want 1 or more"}},
		{name: "sweep: two grid files", args: []string{"sweep", "--out", mergeOut, grid, grid}, want: []string{"2 grid files given", "a sweep runs one grid"}},
		{name: "sweep: neither verb nor grid", args: []string{"sweep", "bogus"}, want: []string{`"bogus" is neither a subcommand (plan, cell, merge, compare, budgets) nor a grid file`}},
		{name: "sweep: typo'd verb", args: []string{"sweep", "comapre", "a", "b"}, want: []string{`unknown subcommand "comapre"`, "did you mean compare?"}},
		{name: "sweep: typo'd flag", args: []string{"sweep", "--jbos", "2", "--out", mergeOut, grid}, want: []string{"-jbos; did you mean -jobs?"}},
		{name: "sweep: bad --memory-budget names it", args: []string{"sweep", "--memory-budget", "lots", "--out", mergeOut, grid}, want: []string{`--memory-budget: "lots" is not a size`}},
		{name: "sweep: empty --out", args: []string{"sweep", "--out", "", grid}, want: []string{"--out given an empty value"}},
		{name: "sweep plan: no grid", args: []string{"sweep", "plan"}, want: []string{"segdiff sweep plan: want one grid file, got 0"}},
		{name: "sweep cell: no --out", args: []string{"sweep", "cell", grid, "--index", "0"}, want: []string{"segdiff sweep cell: --out DIR is required"}},
		{name: "sweep cell: index past the plan", args: []string{"sweep", "cell", grid, "--index", "99", "--out", mergeOut}, want: []string{"--index 99: the plan has cells 0..7"}},
		{name: "sweep merge: no input", args: []string{"sweep", "merge", "--out", mergeOut}, want: []string{"no folder to merge given"}},
		{name: "sweep merge: no --out", args: []string{"sweep", "merge", dir}, want: []string{"--out DIR is required"}},
		{name: "sweep merge: missing input", args: []string{"sweep", "merge", "--out", mergeOut, "/nonexistent"}, want: []string{"input /nonexistent: no such file or directory"}},
		{name: "sweep budgets: no folder", args: []string{"sweep", "budgets"}, want: []string{"no result folder given"}},
		{name: "sweep budgets: no such folder", args: []string{"sweep", "budgets", "--features", "../../features", "/nonexistent"}, want: []string{"/nonexistent:"}},
		{name: "sweep budgets: bad tags", args: []string{"sweep", "budgets", "--tags", "@embedded &&", dir}, want: []string{"--tags:"}},
		{name: "sweep budgets: no budget selected", args: []string{"sweep", "budgets", "--features", "../../features", "--tags", "@health", dir}, want: []string{"check no budget"}},
		{name: "sweep compare: one folder", args: []string{"sweep", "compare", dir}, want: []string{"want two result folders, BASE and NEW; got 1"}},
		{name: "sweep compare: --alpha 2", args: []string{"sweep", "compare", "--alpha", "2", dir, dir}, want: []string{"--alpha 2: want a significance level between 0 and 1"}},
		{name: "sweep compare: bare tolerance 10", args: []string{"sweep", "compare", "--tolerance", "10", dir, dir}, want: []string{"-tolerance", `"10": give a percentage with its sign, e.g. 10%`}},
		{name: "sweep compare: bare tolerance 0.1", args: []string{"sweep", "compare", "--tolerance", "0.1", dir, dir}, want: []string{`"0.1": give a percentage with its sign`}},
		{name: "sweep compare: typo'd metric", args: []string{"sweep", "compare", "--tolerance", "p90=5%", dir, dir}, want: []string{`unknown metric "p90"`, "did you mean p50?"}},
		{name: "sweep compare: missing base", args: []string{"sweep", "compare", "/nonexistent", dir}, want: []string{"BASE /nonexistent: no such file or directory"}},
		{name: "sweep compare: --json into a missing folder", args: []string{"sweep", "compare", "--json", "/nonexistent/dir/c.json", dir, dir}, want: []string{"--json /nonexistent/dir/c.json: directory /nonexistent/dir"}},

		{name: "params: no subcommand", args: []string{"params"}, want: []string{"segdiff params: no subcommand given (params has one: check)"}},
		{name: "params: unknown subcommand", args: []string{"params", "bogus"}, want: []string{`segdiff params: unknown subcommand "bogus" (one of check)`}},
		{name: "params: typo'd subcommand", args: []string{"params", "chek"}, want: []string{"did you mean check?"}},
		{name: "params check: no files", args: []string{"params", "check"}, want: []string{"segdiff params check: no files given"}},
		{name: "params check: typo'd flag", args: []string{"params", "check", "--clinets", "x", "a.yaml"}, want: []string{"-clinets; did you mean -clients?"}},

		{name: "devnet: no subcommand", args: []string{"devnet"}, want: []string{"segdiff devnet: no subcommand given (one of up, wait, down, status)"}},
		{name: "devnet: typo'd subcommand", args: []string{"devnet", "stauts"}, want: []string{`unknown subcommand "stauts"`, "did you mean status?"}},
		{name: "devnet up: no --params", args: []string{"devnet", "up"}, want: []string{"segdiff devnet up: --params is required"}},
		{name: "devnet wait: stray argument", args: []string{"devnet", "wait", "x"}, want: []string{"devnet wait takes flags only"}},
		{name: "devnet down: stray argument", args: []string{"devnet", "down", "now"}, want: []string{`unexpected arguments ["now"]`}},
		{name: "devnet up: typo'd flag", args: []string{"devnet", "up", "--parmas", "x.yaml"}, want: []string{"-parmas; did you mean -params?"}},

		{name: "patches: no subcommand", args: []string{"patches"}, want: []string{"segdiff patches: no subcommand given (one of check, apply, build, claims, matrix)"}},
		{name: "patches: unknown subcommand, before the manifest is read", args: []string{"patches", "bogus"}, want: []string{`unknown subcommand "bogus"`}},
		{name: "patches: typo'd flag", args: []string{"patches", "check", "--manifset", "x"}, want: []string{"--manifset; its flags: --manifest, --client, --source; did you mean --manifest?"}},

		{name: "load: no --rpc", args: []string{"load"}, want: []string{"segdiff load: --rpc is required"}},
		{name: "load: typo'd flag", args: []string{"load", "--rpcc", "x"}, want: []string{"-rpcc; did you mean -rpc?"}},
		{name: "load: empty fork", args: []string{"load", "--rpc", "x", "--fork", ""}, want: []string{"--fork given an empty value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, &stdout, &stderr)
			msg := strings.TrimSuffix(stderr.String(), "\n")
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if strings.Contains(msg, "\n") || msg == "" {
				t.Errorf("stderr is not one line:\n%s", stderr.String())
			}
			if !strings.Contains(msg, "--help') ") && !strings.HasSuffix(msg, "--help')") {
				t.Errorf("no hint to --help: %q", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("stderr %q lacks %q", msg, w)
				}
			}
			if stdout.Len() > 0 {
				t.Errorf("stdout %q", stdout.String())
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("refused invocations left %v in %s", entries, dir)
	}
}

// sweep's flag values are checked before its positional arguments (and
// those before a missing --out): a bad value is named whatever else is
// missing or wrong.
func TestSweepFlagErrorsComeFirst(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "sweep: bad size, no grid", args: []string{"sweep", "--memory-budget", "lots"}, want: `--memory-budget: "lots" is not a size`},
		{name: "sweep: bad size, missing grid", args: []string{"sweep", "--memory-budget", "lots", "--out", dir, "/nonexistent.yaml"}, want: `--memory-budget: "lots" is not a size`},
		{name: "sweep: bad cell limit, no grid", args: []string{"sweep", "--cell-memory-limit", "lots"}, want: `--cell-memory-limit: "lots" is not a size`},
		{name: "sweep: --jobs 0, two grids", args: []string{"sweep", "--jobs", "0", "a.yaml", "b.yaml"}, want: "--jobs 0: want 1 or more"},
		{name: "sweep: no grid before no --out", args: []string{"sweep", "--jobs", "2"}, want: "no grid file given"},
		{name: "sweep: typo'd verb before a bad size", args: []string{"sweep", "comapre", "--memory-budget", "lots"}, want: `unknown subcommand "comapre"`},
		{name: "sweep cell: bad size, no grid", args: []string{"sweep", "cell", "--out", dir, "--memory-budget", "lots"}, want: `--memory-budget: "lots" is not a size`},
		{name: "sweep cell: bad cell limit, two grids", args: []string{"sweep", "cell", "--cell-memory-limit", "lots", "a.yaml", "b.yaml"}, want: `--cell-memory-limit: "lots" is not a size`},
		{name: "sweep merge: missing --grid, no input", args: []string{"sweep", "merge", "--out", filepath.Join(dir, "m"), "--grid", "/nonexistent.yaml"}, want: "read grid"},
		{name: "sweep compare: --alpha 2, one folder", args: []string{"sweep", "compare", "--alpha", "2", "/nonexistent"}, want: "--alpha 2: want a significance level"},
		{name: "sweep compare: --json into a missing folder, no folders", args: []string{"sweep", "compare", "--json", "/nonexistent/dir/c.json"}, want: "--json /nonexistent/dir/c.json"},
		{name: "sweep budgets: bad tags, missing folder", args: []string{"sweep", "budgets", "--tags", "@embedded &&", "/nonexistent"}, want: "--tags:"},
		{name: "sweep budgets: missing features, no folder", args: []string{"sweep", "budgets", "--features", "/nonexistent"}, want: "--features:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, &stdout, &stderr)
			if code != 2 || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 naming %q", code, stderr.String(), tt.want)
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("refused invocations left %v in %s", entries, dir)
	}
}

// --help prints the whole usage and exits 0; only --help does.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"sim", "--help"}, {"sweep", "--help"}, {"sweep", "compare", "-h"}, {"params", "--help"},
		{"params", "check", "--help"}, {"devnet", "--help"}, {"devnet", "up", "--help"}, {"patches", "--help"}, {"load", "--help"}, {"qlogstat", "--help"}} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 0 || strings.Count(stderr.String(), "\n") < 3 || !strings.Contains(stderr.String(), "usage") {
			t.Errorf("%v: exit %d, stderr:\n%s", args, code, stderr.String())
		}
	}
}

// A sim prints its own output and no line of the testing package it runs
// under (PASS; --- FAIL: sim and FAIL), and keeps its exit status: 0 for
// a run that succeeded, 1 with its cause for one that failed after the
// simulation started. Two 16-node simulations, about 10 s.
func TestSimPrintsNoTestingLines(t *testing.T) {
	bin := simBinary(t, "runs two 16-node simulations")
	tiny := []string{"sim", "--nodes", "16", "--degree", "14", "--payloads", "2"}
	testingLine := func(out string) string {
		for _, l := range strings.Split(out, "\n") {
			if l == "PASS" || l == "FAIL" || strings.HasPrefix(l, "--- FAIL") || strings.HasPrefix(l, "--- PASS") {
				return l
			}
		}
		return ""
	}
	t.Run("success", func(t *testing.T) {
		out, err := exec.Command(bin, tiny...).CombinedOutput()
		if err != nil {
			t.Fatalf("sim: %v\n%s", err, out)
		}
		if l := testingLine(string(out)); l != "" {
			t.Errorf("the sim printed the testing package's %q:\n%s", l, out)
		}
		if !strings.Contains(string(out), "PTC timely") {
			t.Errorf("no summary table:\n%s", out)
		}
	})
	t.Run("failure after the start", func(t *testing.T) {
		// --json's folder exists when the sim checks it and is removed once
		// the simulation runs, so writing the results fails at the end.
		gone := filepath.Join(t.TempDir(), "gone")
		if err := os.Mkdir(gone, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, append(tiny, "--json", filepath.Join(gone, "x.json"))...)
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var lines []string
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines = append(lines, sc.Text())
			if strings.HasPrefix(sc.Text(), "run 1/1:") {
				if err := os.Remove(gone); err != nil {
					t.Error(err)
				}
			}
		}
		err = cmd.Wait()
		out := strings.Join(lines, "\n")
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("exit %v, want 1:\n%s", err, out)
		}
		if !strings.Contains(out, "segdiff sim: write results:") {
			t.Errorf("the cause is not reported:\n%s", out)
		}
		if l := testingLine(out + "\n" + stdout.String()); l != "" {
			t.Errorf("the sim printed the testing package's %q:\n%s", l, out)
		}
	})
}

// A flows-model run outside where that model was validated repeats the
// log's note under the summary table on stdout; a validated one prints
// none. Two 16-node simulations of one payload, a few seconds.
func TestSimNotesTheModelsScope(t *testing.T) {
	bin := simBinary(t, "runs two 16-node simulations")
	for _, tt := range []struct {
		mode string
		note bool
	}{{"segmented", true}, {"tier3", false}} {
		t.Run(tt.mode, func(t *testing.T) {
			var stdout, stderr strings.Builder
			cmd := exec.Command(bin, "sim", "--nodes", "16", "--degree", "14", "--payloads", "1", "--net-model", "flows", "--mode", tt.mode)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("sim: %v\n%s", err, stderr.String())
			}
			out := stdout.String()
			table := strings.Index(out, "PTC timely")
			note := strings.Index(out, "note: the flows network model is not validated")
			switch {
			case table < 0:
				t.Fatalf("no summary table:\n%s", out)
			case tt.note && note < table:
				t.Errorf("no note under the table:\n%s", out)
			case !tt.note && note >= 0:
				t.Errorf("a note for a validated mode:\n%s", out)
			}
		})
	}
}

// simBinary is the segdiff binary for a test that runs real simulations in
// it, skipping under -short (they take seconds: why says what runs) and
// under -race, whose runtime the simulations are not run in.
func simBinary(t *testing.T, why string) string {
	t.Helper()
	if testing.Short() {
		t.Skip(why)
	}
	if racedetector.Enabled {
		t.Skip("the simulations run in a segdiff binary built without -race (make test runs this)")
	}
	bin, err := segdiffBin()
	if err != nil {
		t.Fatalf("build segdiff: %v", err)
	}
	return bin
}
