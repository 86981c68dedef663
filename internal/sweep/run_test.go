package sweep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const fourGrid = `name: four
fixed: {nodes: 16, degree: 14, payloads: 2}
axes:
  mode: [whole, segmented]
  seed: [7, 8]
`

func finishedHashes(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, cellsDir))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// A sweep runs every cell, and run again reruns none.
func TestRunResumes(t *testing.T) {
	p := mustPlan(t, fourGrid)
	r := fakeRunner(t)
	r.Jobs = 2
	out, err := r.Run(context.Background(), p)
	if err != nil || out.Ran != 4 || out.Skipped != 0 {
		t.Fatalf("first run: %+v, %v", out, err)
	}
	if got := finishedHashes(t, r.Out); len(got) != 4 {
		t.Fatalf("cell folders %v, want 4", got)
	}
	rec, err := readCell(filepath.Join(r.Out, cellsDir, p.Cells[2].Hash))
	if err != nil || rec.Index != 2 || rec.PeakRSSBytes <= 0 || rec.WallSeconds <= 0 || rec.MemoryEstimateBytes <= 0 {
		t.Fatalf("record %+v, %v", rec, err)
	}
	again, err := r.Run(context.Background(), p)
	if err != nil || again.Ran != 0 || again.Skipped != 4 {
		t.Fatalf("second run: %+v, %v", again, err)
	}
	if _, err := os.Stat(filepath.Join(r.Out, runsLog)); err != nil {
		t.Errorf("no %s: %v", runsLog, err)
	}
}

func maxConcurrency(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "concurrency.log"))
	if err != nil {
		t.Fatal(err)
	}
	most := 0
	for _, l := range strings.Fields(string(b)) {
		n, _ := strconv.Atoi(l)
		most = max(most, n)
	}
	return most
}

// --jobs bounds the cells running at once, and so does the memory budget.
func TestRunJobsAndBudget(t *testing.T) {
	p := mustPlan(t, fourGrid)
	tests := []struct {
		name   string
		jobs   int
		budget int64
		want   int
	}{
		{"two jobs", 2, 0, 2},
		// Measured peaks (tens of MiB for the fake) replace the estimate
		// after the first cell, so a budget of 1 MiB holds one at a time.
		{"budget for one", 2, 1 << 20, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			marks := t.TempDir()
			r := fakeRunner(t, fakeDirEnv+"="+marks, fakeSleepEnv+"=400ms")
			r.Jobs, r.Budget = tt.jobs, tt.budget
			if _, err := r.Run(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			if got := maxConcurrency(t, marks); got != tt.want {
				t.Errorf("at most %d cells ran at once, want %d", got, tt.want)
			}
		})
	}
}

// Under a cell memory limit every cell runs with that GOMEMLIMIT and, unless
// the caller set GOGC, with the collector waiting for the limit; the
// sweep's log records the limit.
func TestRunCellMemoryLimit(t *testing.T) {
	tests := []struct {
		name     string
		gogc     string // the caller's GOGC; "-" for unset
		limit    int64
		wantLine string
	}{
		{"limit", "-", 3 << 30, "3221225472 off"},
		{"limit, caller's GOGC", "200", 3 << 30, "3221225472 200"},
		{"no limit", "-", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.gogc == "-" {
				unsetEnv(t, "GOGC")
			} else {
				t.Setenv("GOGC", tt.gogc)
			}
			unsetEnv(t, "GOMEMLIMIT")
			g, err := Decode("test.yaml", []byte(fourGrid))
			if err != nil {
				t.Fatal(err)
			}
			p, err := NewPlan(g, Memory{CellLimit: tt.limit})
			if err != nil {
				t.Fatal(err)
			}
			marks := t.TempDir()
			r := fakeRunner(t, fakeDirEnv+"="+marks)
			if _, err := r.Run(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(marks, "gomemlimit.log"))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			if len(lines) != len(p.Cells) {
				t.Fatalf("%d cells noted their environment, want %d", len(lines), len(p.Cells))
			}
			for _, l := range lines {
				if strings.TrimSpace(l) != tt.wantLine {
					t.Errorf("a cell ran with GOMEMLIMIT and GOGC %q, want %q", l, tt.wantLine)
				}
			}
			if tt.limit == 0 {
				return
			}
			log, err := os.ReadFile(filepath.Join(r.Out, runsLog))
			if err != nil || !strings.Contains(string(log), `"cell_memory_limit_bytes":3221225472`) {
				t.Errorf("runs.jsonl = %s, %v", log, err)
			}
		})
	}
}

// unsetEnv unsets key for the test and restores it after.
func unsetEnv(t *testing.T, key string) {
	t.Helper()
	t.Setenv(key, "") // registers the restore
	os.Unsetenv(key)
}

// Interrupting a sweep stops its cells and leaves no folder for them; the
// next run reruns exactly those.
func TestRunInterrupted(t *testing.T) {
	p := mustPlan(t, fourGrid)
	marks := t.TempDir()
	r := fakeRunner(t, fakeDirEnv+"="+marks, fakeSleepEnv+"=30s")
	r.Jobs = 2
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			if es, _ := filepath.Glob(filepath.Join(marks, "running-*")); len(es) == 2 {
				cancel()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	start := time.Now()
	_, err := r.Run(ctx, p)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	if time.Since(start) > 15*time.Second {
		t.Errorf("stopping took %v", time.Since(start))
	}
	if got := finishedHashes(t, r.Out); len(got) != 0 {
		t.Errorf("folders left behind: %v", got)
	}
	pids, _ := filepath.Glob(filepath.Join(marks, "running-*"))
	for _, m := range pids {
		pid, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(m), "running-"))
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("cell process %d still running", pid)
		}
	}
}

// A failed cell keeps its log, is not marked finished, and fails the sweep
// after the other cells ran.
func TestRunFailedCell(t *testing.T) {
	p := mustPlan(t, fourGrid)
	r := fakeRunner(t, fakeFailEnv+"=8")
	out, err := r.Run(context.Background(), p)
	if err == nil || len(out.Failed) != 2 || out.Ran != 2 {
		t.Fatalf("outcome %+v, err %v; want the two seed-8 cells failed", out, err)
	}
	log, rerr := os.ReadFile(filepath.Join(r.Out, failedDir, p.Cells[1].Hash+".log"))
	if rerr != nil || !strings.Contains(string(log), "failing as asked") {
		t.Errorf("failed log: %q, %v", log, rerr)
	}
	if finished(r.Out, p.Cells[1].Hash) {
		t.Error("a failed cell is marked finished")
	}
}

// The cluster path — plan, one cell per machine, merge — gives the summary
// a local run of the same grid gives.
func TestClusterPathMatchesLocal(t *testing.T) {
	p := mustPlan(t, smokeGrid)
	local := fakeRunner(t)
	local.Jobs = 2
	if _, err := local.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	want, _, err := Write(context.Background(), local.Out, p)
	if err != nil {
		t.Fatal(err)
	}
	var machines []string
	for i := range p.Cells {
		m := fakeRunner(t) // a machine of its own per cell
		if skipped, err := m.RunCell(context.Background(), p, i); err != nil || skipped {
			t.Fatalf("cell %d: skipped %v, %v", i, skipped, err)
		}
		machines = append(machines, m.Out)
	}
	merged := t.TempDir()
	got, files, err := Merge(context.Background(), merged, nil, machines...)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 4 {
		t.Errorf("merge wrote %v", files)
	}
	if got.Cells != 8 || got.Planned != 8 || len(got.Missing) != 0 {
		t.Fatalf("merged %d of %d cells, missing %v", got.Cells, got.Planned, got.Missing)
	}
	// Every figure; wall times (the overview's last column, the cost
	// table) are the machines' own.
	figures := func(s *Summary) string {
		var b strings.Builder
		tables := s.Tables()
		ov := tables[0]
		ov.Columns = ov.Columns[:len(ov.Columns)-1]
		ov.WriteMarkdown(&b)
		for _, tb := range tables[1 : 1+2*len(Metrics)] {
			tb.WriteMarkdown(&b)
		}
		return b.String()
	}
	wantMD, gotMD := figures(want), figures(got)
	if wantMD != gotMD {
		t.Errorf("merged tables differ from the local run's:\n%s\nwant:\n%s", gotMD, wantMD)
	}
	if strings.Join(got.RowLabels, ",") != "whole,segmented" || strings.Join(got.ColumnLabels, ",") != "home,dc20" {
		t.Errorf("layout rows %v columns %v", got.RowLabels, got.ColumnLabels)
	}
	// A cell already in the folder is not run again.
	if skipped, err := (&Runner{Binary: "/nonexistent", Out: machines[3]}).RunCell(context.Background(), p, 3); err != nil || !skipped {
		t.Errorf("rerun of a finished cell: skipped %v, %v", skipped, err)
	}
}

// The memory model starts from the estimate and moves to the measured
// peak of the cell's class plus a tenth.
func TestMemoryModel(t *testing.T) {
	p := mustPlan(t, fourGrid)
	m := newMemoryModel()
	whole7, whole8, seg7 := p.Cells[0], p.Cells[1], p.Cells[2]
	if got := m.estimate(whole8); got != whole8.Memory {
		t.Fatalf("before any peak: %d, want the estimate %d", got, whole8.Memory)
	}
	m.observe(whole7, 100<<20)
	if got := m.estimate(whole8); got != 110<<20 {
		t.Errorf("same class after a 100 MiB peak: %d, want 110 MiB", got)
	}
	if got := m.estimate(seg7); got != seg7.Memory {
		t.Errorf("another mode: %d, want its estimate", got)
	}
}

// Cells one grid ran count for another grid with the same configurations:
// merged as that grid's cells, relabelled, and the folder then belongs to
// the new grid alone.
func TestMergeAdoptsCellsOfAnotherGrid(t *testing.T) {
	const fixed = "fixed: {nodes: 16, degree: 14, payloads: 2}\n"
	small := mustPlan(t, "name: small\n"+fixed+"axes:\n  mode: [whole]\n  seed: [1, 2]\n")
	r := fakeRunner(t)
	if _, err := r.Run(context.Background(), small); err != nil {
		t.Fatal(err)
	}
	ladder := mustPlan(t, "name: ladder\n"+fixed+"axes:\n  mode: [segmented, whole]\n  seed: [1, 2]\n")
	out := t.TempDir()
	s, _, err := Merge(context.Background(), out, ladder, r.Out)
	if err != nil {
		t.Fatal(err)
	}
	if s.Sweep != "ladder" || s.Cells != 2 || s.Planned != 4 || fmt.Sprint(s.Missing) != "[0 1]" {
		t.Fatalf("summary %s: %d of %d cells, missing %v", s.Sweep, s.Cells, s.Planned, s.Missing)
	}
	if len(s.Configurations) != 1 || s.Configurations[0].Configuration != "mode=whole" {
		t.Errorf("configurations %v", s.Configurations)
	}
	var rec Record
	if err := readJSON(filepath.Join(out, cellsDir, ladder.Cells[3].Hash, recordFile), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Sweep != "ladder" || rec.Index != 3 || rec.Cells != 4 {
		t.Errorf("record not relabelled: %s index %d of %d", rec.Sweep, rec.Index, rec.Cells)
	}
	if again, _, err := Write(context.Background(), out, nil); err != nil || again.Cells != 2 {
		t.Errorf("the merged folder alone: %v, %v", again, err)
	}
}

// Merge reads every input before it creates or changes the output: a bad
// input leaves no output folder behind.
func TestMergeChecksInputsFirst(t *testing.T) {
	const fixed = "fixed: {nodes: 16, degree: 14, payloads: 2}\n"
	small := mustPlan(t, "name: small\n"+fixed+"axes:\n  mode: [whole]\n  seed: [1]\n")
	r := fakeRunner(t)
	if _, err := r.Run(context.Background(), small); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, recordFile), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := mustPlan(t, "name: other\nfixed: {nodes: 20, degree: 14, payloads: 2}\naxes:\n  mode: [whole]\n  seed: [1]\n")
	tests := []struct {
		name    string
		plan    *Plan
		inputs  []string
		wantErr string
	}{
		{name: "missing input", inputs: []string{r.Out, filepath.Join(empty, "nope")}, wantErr: "no such file or directory"},
		{name: "input without cells", inputs: []string{r.Out, empty}, wantErr: empty + " holds no finished cell"},
		{name: "malformed record", inputs: []string{r.Out, broken}, wantErr: "decode " + filepath.Join(broken, recordFile)},
		{name: "no cell of the grid", plan: other, inputs: []string{r.Out}, wantErr: "none of the 1 cells in " + r.Out + " is a cell of grid other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "merged")
			_, _, err := Merge(context.Background(), out, tt.plan, tt.inputs...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Merge = %v, want an error containing %q", err, tt.wantErr)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a failed merge left %s behind (%v)", out, err)
			}
		})
	}
}

// sweep.md names the configurations that run the flows network model
// outside where it was validated, and only those.
func TestSummaryNamesModelCaveats(t *testing.T) {
	s, _ := runAndWrite(t, `name: models
fixed: {nodes: 16, degree: 14, payloads: 2}
axes:
  mode: [segmented, tier3]
  net-model: [packets, flows]
  seed: [7]
`)
	var b strings.Builder
	if err := s.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	line := ""
	for l := range strings.SplitSeq(md, "\n") {
		if strings.Contains(l, "validated scope") {
			line = l
		}
	}
	if !strings.Contains(line, "`mode=segmented net-model=flows`") {
		t.Fatalf("sweep.md does not name segmented on the flows model as outside its scope:\n%s", md)
	}
	for _, inside := range []string{"`mode=segmented net-model=packets`", "`mode=tier3 net-model=packets`", "`mode=tier3 net-model=flows`"} {
		if strings.Contains(line, inside) {
			t.Errorf("scope line names %s: %s", inside, line)
		}
	}
}
