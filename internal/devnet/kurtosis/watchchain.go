package kurtosis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kurtosis-tech/kurtosis/api/golang/core/lib/enclaves"
	"github.com/kurtosis-tech/kurtosis/api/golang/core/lib/services"

	"github.com/segdiff/segdiff/internal/poll"
)

// clTarget is a CL the chain watch reads.
type clTarget struct {
	// id is the CL's service name (the node id of the endpoints file).
	id        string
	beaconURL string
	// container is its Docker container ("" when unknown).
	container string
}

// beaconReader reads a beacon node's head slot and the chain's clock.
type beaconReader interface {
	headSlot(ctx context.Context, baseURL string) (uint64, error)
	clock(ctx context.Context, baseURL string) (slotClock, error)
}

// beaconHTTP reads the standard beacon API with plain JSON requests.
type beaconHTTP struct {
	client  *http.Client
	timeout time.Duration
}

func newBeaconHTTP(timeout time.Duration) *beaconHTTP {
	// No proxy: the nodes' public addresses are the host side of the
	// enclave's port publishing.
	return &beaconHTTP{client: &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 2}}, timeout: timeout}
}

func (b *beaconHTTP) getJSON(ctx context.Context, url string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := b.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, oneLine(string(body), 160))
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	return nil
}

// headSlot reads /eth/v1/beacon/headers/head.
func (b *beaconHTTP) headSlot(ctx context.Context, base string) (uint64, error) {
	var r struct {
		Data struct {
			Header struct {
				Message struct {
					Slot string `json:"slot"`
				} `json:"message"`
			} `json:"header"`
		} `json:"data"`
	}
	if err := b.getJSON(ctx, base+"/eth/v1/beacon/headers/head", &r); err != nil {
		return 0, err
	}
	slot, err := strconv.ParseUint(r.Data.Header.Message.Slot, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("head header of %s: slot %q: %w", base, r.Data.Header.Message.Slot, err)
	}
	return slot, nil
}

// clock reads genesis_time from /eth/v1/beacon/genesis and the slot
// duration from /eth/v1/config/spec: SLOT_DURATION_MS when present (Gloas
// configs), else SECONDS_PER_SLOT.
func (b *beaconHTTP) clock(ctx context.Context, base string) (slotClock, error) {
	var g struct {
		Data struct {
			GenesisTime string `json:"genesis_time"`
		} `json:"data"`
	}
	if err := b.getJSON(ctx, base+"/eth/v1/beacon/genesis", &g); err != nil {
		return slotClock{}, err
	}
	secs, err := strconv.ParseInt(g.Data.GenesisTime, 10, 64)
	if err != nil || secs <= 0 {
		return slotClock{}, fmt.Errorf("genesis of %s: genesis_time %q is not a positive number", base, g.Data.GenesisTime)
	}
	var s struct {
		Data map[string]any `json:"data"`
	}
	if err := b.getJSON(ctx, base+"/eth/v1/config/spec", &s); err != nil {
		return slotClock{}, err
	}
	slot, err := specSlot(s.Data)
	if err != nil {
		return slotClock{}, fmt.Errorf("spec of %s: %w", base, err)
	}
	return slotClock{genesis: time.Unix(secs, 0), slot: slot}, nil
}

// specSlot is the slot duration of a beacon spec (values are JSON strings).
func specSlot(spec map[string]any) (time.Duration, error) {
	num := func(key string) uint64 {
		s, _ := spec[key].(string)
		n, _ := strconv.ParseUint(s, 10, 64)
		return n
	}
	if ms := num("SLOT_DURATION_MS"); ms > 0 {
		return time.Duration(ms) * time.Millisecond, nil
	}
	if s := num("SECONDS_PER_SLOT"); s > 0 {
		return time.Duration(s) * time.Second, nil
	}
	return 0, errors.New("neither SLOT_DURATION_MS nor SECONDS_PER_SLOT is a positive number")
}

// chainWatcher polls every CL's head, judges it with a chainJudge, prints
// progress and builds the stall error. Its methods are not safe for
// concurrent use; Up hands it from the run's goroutine to its own.
type chainWatcher struct {
	judge  *chainJudge
	beacon beaconReader
	// logs reads a stalled node's container log; nil with logsErr saying
	// why there is none.
	logs    logReader
	logsErr error
	out     io.Writer
	now     func() time.Time
	// clockWait bounds how long the CLs may fail to give a clock once
	// the first one is watched.
	clockWait time.Duration

	targets     map[string]clTarget
	firstTarget time.Time
	clockErr    error
	announced   bool
	printed     uint64 // last wall slot printed + 1; 0 = none
}

// defaultClockWait bounds the wait for a slot clock from any CL.
const defaultClockWait = 3 * time.Minute

// newChainWatcher returns the watch Up runs.
func newChainWatcher(p *parameters) *chainWatcher {
	w := &chainWatcher{
		judge:     newChainJudge(p.stallSlots, p.progressSlots),
		beacon:    newBeaconHTTP(5 * time.Second),
		out:       p.log,
		now:       time.Now,
		clockWait: defaultClockWait,
		targets:   map[string]clTarget{},
	}
	w.logs, w.logsErr = newDockerLogs(p.dockerHost)
	if w.logsErr != nil {
		w.logs = nil
	}
	return w
}

// addTargets watches ts too; a target already watched is kept.
func (w *chainWatcher) addTargets(ts []clTarget) {
	for _, t := range ts {
		if _, ok := w.targets[t.id]; ok {
			continue
		}
		w.targets[t.id] = t
		fmt.Fprintf(w.out, "chain watch: %s (%s)\n", t.id, t.beaconURL)
	}
}

// setTargets watches exactly ts.
func (w *chainWatcher) setTargets(ts []clTarget) {
	known := w.targets
	w.targets = map[string]clTarget{}
	for _, t := range ts {
		if _, ok := known[t.id]; ok {
			w.targets[t.id] = t
		}
	}
	w.addTargets(ts)
}

func (w *chainWatcher) ids() []string {
	return slices.Sorted(maps.Keys(w.targets))
}

// round reads every target's head once and judges them. A stall (or no
// clock from any CL within clockWait) is an error marked by poll.Stop
// wrapping ErrChainStalled; otherwise the verdict says where the chain is.
func (w *chainWatcher) round(ctx context.Context) (chainVerdict, error) {
	ids := w.ids()
	if len(ids) == 0 {
		return chainVerdict{}, nil
	}
	if w.firstTarget.IsZero() {
		w.firstTarget = w.now()
	}
	if !w.judge.clock.known() {
		for _, id := range ids {
			c, err := w.beacon.clock(ctx, w.targets[id].beaconURL)
			if err == nil {
				w.judge.clock = c
				break
			}
			w.clockErr = fmt.Errorf("%s: %w", id, err)
		}
		if !w.judge.clock.known() {
			if waited := w.now().Sub(w.firstTarget); waited > w.clockWait {
				return chainVerdict{}, poll.Stop(fmt.Errorf("%w: no CL gave its genesis time and slot duration within %v; last error: %w",
					ErrChainStalled, w.clockWait, w.clockErr))
			}
		}
	}
	w.readHeads(ctx, ids)
	v := w.judge.verdict(w.now(), ids)
	w.print(v)
	if len(v.stalled) > 0 {
		return v, poll.Stop(w.stallError(ctx, v))
	}
	return v, nil
}

// readHeads reads every node's head concurrently.
func (w *chainWatcher) readHeads(ctx context.Context, ids []string) {
	readings := make([]headReading, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			slot, err := w.beacon.headSlot(ctx, w.targets[id].beaconURL)
			readings[i] = headReading{at: w.now(), slot: slot, err: err}
		})
	}
	wg.Wait()
	for i, id := range ids {
		w.judge.observe(id, readings[i])
	}
}

// print announces the clock once and the heads once per wall slot.
func (w *chainWatcher) print(v chainVerdict) {
	if !v.clockKnown {
		return
	}
	if !w.announced {
		w.announced = true
		c := w.judge.clock
		when := "passed"
		if v.preGenesis {
			when = "in " + v.untilGenesis.Round(time.Second).String()
		}
		fmt.Fprintf(w.out, "chain watch: genesis %s (%s), %v slots; up once every CL's head advanced %d slots, failing on a head %d slots behind\n",
			c.genesis.UTC().Format(time.RFC3339), when, c.slot, w.judge.progressSlots, w.judge.stallSlots)
	}
	if v.preGenesis || v.wallSlot+1 == w.printed {
		return
	}
	w.printed = v.wallSlot + 1
	fmt.Fprintln(w.out, v.progressLine())
}

// stallError names every stalled node with its head, the wall slot and the
// last error line of its container log.
func (w *chainWatcher) stallError(ctx context.Context, v chainVerdict) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d CLs stalled at wall slot %d (head more than %d slots behind and no new head for %d slots; --stall-slots sets this):",
		len(v.stalled), len(v.nodes), v.wallSlot, w.judge.stallSlots, w.judge.stallSlots)
	for _, s := range v.stalled {
		still := s.still.Round(time.Second)
		if s.still < 10*time.Second {
			still = s.still.Round(100 * time.Millisecond)
		}
		if s.answered {
			fmt.Fprintf(&b, "\n  %s: head slot %d, no new head for %v", s.id, s.head, still)
		} else {
			fmt.Fprintf(&b, "\n  %s: no head read for %v", s.id, still)
		}
		if s.err != nil {
			fmt.Fprintf(&b, " (beacon API: %s)", oneLine(s.err.Error(), 160))
		}
		fmt.Fprintf(&b, "\n    %s", w.logLine(ctx, w.targets[s.id].container, s.still))
	}
	return fmt.Errorf("%w: %s", ErrChainStalled, b.String())
}

// logLine quotes the last error line of container's log since its head
// stopped advancing (stalled ago), else the last one before that, saying
// so, or says why it cannot: a client may log the cause only at its next
// proposal, after a config warning from its start.
func (w *chainWatcher) logLine(ctx context.Context, container string, stalled time.Duration) string {
	switch {
	case w.logs == nil:
		return fmt.Sprintf("its container log was unavailable: %v", w.logsErr)
	case container == "":
		return "its container log was unavailable: the service's container is unknown"
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	line, err := w.logs.lastErrorLine(ctx, container, time.Now().Add(-stalled))
	if err == nil {
		return fmt.Sprintf("last error line of its container log (%s): %s", container, line)
	}
	if !errors.Is(err, errNoErrorLine) {
		return fmt.Sprintf("its container log (%s) was unavailable: %v", container, err)
	}
	before, err := w.logs.lastErrorLine(ctx, container, time.Time{})
	switch {
	case errors.Is(err, errNoErrorLine):
		return fmt.Sprintf("its container log (%s) has %v", container, err)
	case err != nil:
		return fmt.Sprintf("its container log (%s) was unavailable: %v", container, err)
	}
	return fmt.Sprintf("no error line in its container log (%s) since its head stopped advancing %v ago; the last before that: %s",
		container, stalled.Round(time.Second), before)
}

// errRunning keeps the watch during the run polling.
var errRunning = errors.New("package run in progress")

// runWatchLimit is the deadline of the watch during the package run, whose
// end (its context) is what stops it.
const runWatchLimit = 24 * time.Hour

// watchDuringRun watches the CLs the running package has started (polled
// from the enclave's services) until ctx ends, returning only a stall:
// an error wrapping ErrChainStalled.
func (w *chainWatcher) watchDuringRun(ctx context.Context, ec serviceLister, interval time.Duration) error {
	err := poll.Until(ctx, time.Now().Add(runWatchLimit), interval, func(ctx context.Context) error {
		w.addTargets(runningCLs(ec, w.targets))
		if _, err := w.round(ctx); err != nil {
			return err
		}
		return errRunning
	})
	if errors.Is(err, ErrChainStalled) {
		return err
	}
	return nil
}

// waitForProgress watches ts until every head advanced the progress slots
// (nil), one stalls (an error wrapping ErrChainStalled), timeout passes or
// ctx ends.
func (w *chainWatcher) waitForProgress(ctx context.Context, ts []clTarget, timeout, interval time.Duration) error {
	w.setTargets(ts)
	var last chainVerdict
	err := poll.Until(ctx, time.Now().Add(timeout), interval, func(ctx context.Context) error {
		v, err := w.round(ctx)
		if err != nil {
			return err
		}
		last = v
		if v.done {
			return nil
		}
		return errors.New(v.pending(w.judge.progressSlots))
	})
	switch {
	case err == nil:
		fmt.Fprintf(w.out, "chain progressing: every CL's head advanced at least %d slots (%s)\n", w.judge.progressSlots, last.progressLine())
		return nil
	case errors.Is(err, ErrChainStalled):
		return err
	case errors.Is(err, poll.ErrTimeout):
		return fmt.Errorf("chain progress: not every CL's head advanced %d slots within %v (the wait after the package run; --chain-timeout): %w",
			w.judge.progressSlots, timeout, err)
	}
	return fmt.Errorf("chain progress: %w", err)
}

// serviceLister is the slice of *enclaves.EnclaveContext the watch during
// the run needs.
type serviceLister interface {
	serviceLookup
	GetServices() (map[services.ServiceName]services.ServiceUUID, error)
}

var _ serviceLister = (*enclaves.EnclaveContext)(nil)

// clServiceRE matches ethereum-package's CL service names,
// cl-<index>-<cl type>[-<el type>].
var clServiceRE = regexp.MustCompile(`^cl-[0-9]+-[a-z0-9]+`)

// runningCLs returns the enclave's CL services not in known that publish
// their beacon API. Errors leave a service for the next round.
func runningCLs(ec serviceLister, known map[string]clTarget) []clTarget {
	names, err := ec.GetServices()
	if err != nil {
		return nil
	}
	var out []clTarget
	for name, uuid := range names {
		id := string(name)
		if _, ok := known[id]; ok || !clServiceRE.MatchString(id) {
			continue
		}
		urls, err := publicBase(ec, id, PortCLHTTP)
		if err != nil {
			continue
		}
		out = append(out, clTarget{id: id, beaconURL: urls[PortCLHTTP], container: containerName(id, string(uuid))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// endpointTargets are the CLs of the endpoints file, their containers from
// known or the enclave.
func endpointTargets(ec serviceLookup, e *Endpoints, known map[string]clTarget) []clTarget {
	out := make([]clTarget, 0, len(e.Nodes))
	for _, n := range e.Nodes {
		t := clTarget{id: n.CLService, beaconURL: n.BeaconURL}
		if k, ok := known[n.CLService]; ok {
			t.container = k.container
		} else if sc, err := ec.GetServiceContext(n.CLService); err == nil {
			t.container = containerName(n.CLService, string(sc.GetServiceUUID()))
		}
		out = append(out, t)
	}
	return out
}
