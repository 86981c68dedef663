package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/segdiff/segdiff/internal/devnet/embedded/qlogstat"
)

// qlogstat is a diagnostic, listed neither in the usage nor in the
// unknown-command hints: it reads the qlog traces a `segdiff sim` run
// wrote with QLOGDIR set (the packet model's quic-go traces or the
// flows-cc model's) and that run's --json output.
func init() {
	register("qlogstat", command{summary: "diagnostic: per-connection congestion state of a sim run's qlog traces over its warm slots", run: runQlogstat, hidden: true})
}

const qlogstatUsage = `usage: segdiff qlogstat --run RUN.json --qlog DIR [flags]
Reads the qlog traces of a 'segdiff sim' run made with QLOGDIR=DIR (one
file per connection endpoint: quic-go's on the packet model, flownet's on
flows-cc) and the run's --json output, and reports for each warm slot,
from the reveal to the network's completion, the congestion state of the
sending directions that carried the payload and how the builder's uplink
was shared.
`

func runQlogstat(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("qlogstat")
	runPath := fs.String("run", "", "the run's --json output (one run)")
	dir := fs.String("qlog", "", "the QLOGDIR the run wrote")
	bin := fs.Duration("bin", 50*time.Millisecond, "width of the builder's throughput bins")
	carrying := fs.Int("carrying", 16<<10, "least stream bytes a direction sends in the window to count as carrying the payload")
	uplink := fs.Float64("uplink-mbps", 50, "the builder's uplink, Mbps")
	perConn := fs.Bool("per-conn", false, "list the builder's carrying directions one by one")
	cold := fs.Bool("cold", false, "include the cold (first) slot")
	rest, code, ok := parseCommand(stderr, "qlogstat", qlogstatUsage, fs, args)
	if !ok {
		return code
	}
	if len(rest) > 0 || *runPath == "" || *dir == "" {
		return usageErrorf(stderr, "qlogstat", "want --run and --qlog and no arguments%s", listed(rest))
	}
	builder, windows, err := readWindows(*runPath, *cold)
	if err != nil {
		fmt.Fprintf(stderr, "segdiff qlogstat: %v\n", err)
		return 1
	}
	files, err := filepath.Glob(filepath.Join(*dir, "*.sqlog"))
	if err != nil || len(files) == 0 {
		fmt.Fprintf(stderr, "segdiff qlogstat: no *.sqlog files in %s\n", *dir)
		return 1
	}
	sort.Strings(files)
	var conns []*qlogstat.Conn
	for _, f := range files {
		c, err := scanFile(f, windows, *bin)
		if err != nil {
			fmt.Fprintf(stderr, "segdiff qlogstat: %s: %v\n", f, err)
			return 1
		}
		conns = append(conns, c)
	}
	qlogstat.Report(stdout, conns, windows, qlogstat.Options{Builder: builder, UplinkMbps: *uplink, Bin: *bin, Carrying: *carrying, PerConn: *perConn})
	return 0
}

func scanFile(path string, windows []qlogstat.Window, bin time.Duration) (*qlogstat.Conn, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return qlogstat.Scan(f, windows, bin)
}

// readWindows reads a sim --json output: the builder and, per slot (warm
// ones unless cold), the span from the reveal to network completion (to
// the last node's completion if some node never completed).
func readWindows(path string, cold bool) (int, []qlogstat.Window, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, nil, err
	}
	var runs []struct {
		Result *struct {
			Builder int `json:"builder"`
			Slots   []struct {
				Slot              uint64          `json:"slot"`
				Warm              bool            `json:"warm"`
				Reveal            time.Time       `json:"reveal"`
				Completion        []time.Duration `json:"completion_ns"`
				NetworkCompletion time.Duration   `json:"network_completion_ns"`
			} `json:"slots"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &runs); err != nil {
		return 0, nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(runs) != 1 || runs[0].Result == nil {
		return 0, nil, fmt.Errorf("%s: want the output of one run, got %d", path, len(runs))
	}
	r := runs[0].Result
	var ws []qlogstat.Window
	for _, s := range r.Slots {
		if !s.Warm && !cold {
			continue
		}
		span := s.NetworkCompletion
		if span <= 0 {
			for _, c := range s.Completion {
				span = max(span, c)
			}
		}
		ws = append(ws, qlogstat.Window{Slot: s.Slot, Start: s.Reveal, End: s.Reveal.Add(span)})
	}
	if len(ws) == 0 {
		return 0, nil, fmt.Errorf("%s: no slot to report", path)
	}
	return r.Builder, ws, nil
}
