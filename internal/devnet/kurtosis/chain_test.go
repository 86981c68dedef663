package kurtosis_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segdiff/segdiff/internal/devnet/kurtosis"
	"github.com/segdiff/segdiff/internal/devnet/kurtosis/kurtosistest"
)

// chainSlot is the fake chain's slot: short, so that a stall shows within
// a second or two.
const chainSlot = 300 * time.Millisecond

// fakeChain is the slot clock the fake beacon nodes share; genesis is a
// whole second (genesis_time is in seconds), up to a second ahead.
type fakeChain struct{ genesis time.Time }

func newFakeChain() fakeChain {
	return fakeChain{genesis: time.Now().Truncate(time.Second).Add(time.Second)}
}

// wall is the wall-clock slot (0 before genesis).
func (c fakeChain) wall() uint64 {
	if d := time.Since(c.genesis); d > 0 {
		return uint64(d / chainSlot)
	}
	return 0
}

// beaconNode serves the three beacon API calls of the chain watch, the head
// from head(); it returns the host port.
func beaconNode(t *testing.T, c fakeChain, head func() uint64) uint32 {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/eth/v1/beacon/genesis":
			fmt.Fprintf(w, `{"data":{"genesis_time":"%d","genesis_validators_root":"0x00","genesis_fork_version":"0x10000038"}}`, c.genesis.Unix())
		case "/eth/v1/config/spec":
			fmt.Fprintf(w, `{"data":{"SECONDS_PER_SLOT":"12","SLOT_DURATION_MS":"%d","SLOTS_PER_EPOCH":"32"}}`, chainSlot.Milliseconds())
		case "/eth/v1/beacon/headers/head":
			fmt.Fprintf(w, `{"execution_optimistic":false,"finalized":false,"data":{"root":"0x01","canonical":true,"header":{"message":{"slot":"%d","proposer_index":"1"}}}}`, head())
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return port(t, srv.URL)
}

func port(t *testing.T, raw string) uint32 {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return uint32(p)
}

// dockerAPI serves the container logs of the fake services (the fake API
// container names service s's container "s--svcs") and returns its host
// as DOCKER_HOST spells it.
func dockerAPI(t *testing.T, logs map[string]string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, _ := strings.CutPrefix(r.URL.Path, "/containers/")
		name, call, _ := strings.Cut(rest, "/")
		service, _, _ := strings.Cut(name, "--")
		log, ok := logs[service]
		switch {
		case !ok || name != service+"--svc"+service:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"message":"No such container: %s"}`, name)
		case call == "json":
			fmt.Fprint(w, `{"Config":{"Tty":false}}`)
		case call == "logs":
			hdr := make([]byte, 8)
			hdr[0] = 2
			binary.BigEndian.PutUint32(hdr[4:], uint32(len(log)))
			w.Write(append(hdr, log...))
		}
	}))
	t.Cleanup(srv.Close)
	return "tcp://" + strings.TrimPrefix(srv.URL, "http://")
}

// chainServices registers runOutput's services, the CLs' beacon APIs on the
// given ports.
func chainServices(a *kurtosistest.APIContainer, cl1, cl2 uint32) {
	a.AddService("cl-1-prysm-geth", map[string]uint32{"http": cl1, "metrics": 33002})
	a.AddService("el-1-geth-prysm", map[string]uint32{"rpc": 33003, "metrics": 33004})
	a.AddService("cl-2-prysm-geth", map[string]uint32{"http": cl2, "metrics": 33102})
	a.AddService("el-2-geth-prysm", map[string]uint32{"rpc": 33103})
	a.AddService("segdiff-prometheus", map[string]uint32{"http": 33010})
	a.AddService("segdiff-grafana", map[string]uint32{"dashboards": 33011})
}

const prysmError = `time="2026-12-07 12:00:12" level=error msg="Could not propose block" error="rpc error: payload unknown" prefix=rpc/validator slot=1`

func chainParams(t *testing.T, enclave, dir string, log *syncBuffer, dockerHost string) []kurtosis.Parameter {
	return append(upParams(t, enclave, writePackage(t), writeFile(t, "p.yaml", testParams), dir, log),
		kurtosis.WithProgressSlots(2), kurtosis.WithStallSlots(2), kurtosis.WithChainPollInterval(50*time.Millisecond),
		kurtosis.WithChainTimeout(30*time.Second), kurtosis.WithDockerHost(dockerHost))
}

// TestUpWatchesChainDuringRun is the stalled devnet: the package is still
// running (waiting for the first block, as segdiff.load's plan.wait does)
// when every proposal is refused. Up fails within two slots of the stall,
// naming the nodes and quoting each one's last error log line, and keeps
// the enclave for inspection.
func TestUpWatchesChainDuringRun(t *testing.T) {
	eng := kurtosistest.Start(t)
	eng.APIC.Script(kurtosistest.EndHang, kurtosistest.Lines(kurtosistest.Interpreting(),
		kurtosistest.Instruction(1, 30, "add_service", "Adding service cl-1-prysm-geth", "ok"))...)
	chain := newFakeChain()
	chainServices(eng.APIC, beaconNode(t, chain, func() uint64 { return 0 }), beaconNode(t, chain, func() uint64 { return 0 }))
	docker := dockerAPI(t, map[string]string{"cl-1-prysm-geth": "level=info msg=started\n" + prysmError + "\nlevel=info msg=waiting\n"})
	dir := t.TempDir()
	log := &syncBuffer{}
	start := time.Now()
	_, err := kurtosis.Up(context.Background(), chainParams(t, "stalled", dir, log, docker)...)
	elapsed := time.Since(start)
	if !errors.Is(err, kurtosis.ErrChainStalled) {
		t.Fatalf("Up error = %v, want ErrChainStalled\nlog:\n%s", err, log)
	}
	t.Logf("log:\n%s\nerror:\n%v", log, err)
	for _, want := range []string{
		"2 of 2 CLs stalled at wall slot 3",
		"cl-1-prysm-geth: head slot 0, no new head for",
		"last error line of its container log (cl-1-prysm-geth--svccl-1-prysm-geth): " + prysmError,
		"cl-2-prysm-geth: head slot 0",
		"its container log (cl-2-prysm-geth--svccl-2-prysm-geth) was unavailable: docker engine API: GET /containers/cl-2-prysm-geth--svccl-2-prysm-geth/json: 404 Not Found: No such container",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Up error lacks %q:\n%v", want, err)
		}
	}
	// The stall shows at the start of wall slot 3: two slots after slot 1
	// brought no block. (Genesis was at most a second ahead.)
	if since := time.Since(chain.genesis); since < 3*chainSlot || since > 3*chainSlot+1500*time.Millisecond {
		t.Errorf("the stall was reported %v after genesis (Up took %v), want just after 3 slots (%v)", since, elapsed, 3*chainSlot)
	}
	for _, want := range []string{"chain watch: cl-1-prysm-geth (http://127.0.0.1:", "chain watch: genesis ", "head slot 0 / wall slot 1 on cl-1-prysm-geth, 0 on cl-2-prysm-geth", "kept for inspection"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if got := eng.Destroyed(); len(got) != 0 {
		t.Errorf("a stalled devnet's enclave was destroyed: %v", got)
	}
	if _, err := os.Stat(kurtosis.EndpointsPath(dir, "stalled")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("endpoints file written for a stalled devnet: %v", err)
	}
}

// TestUpWaitsForChainProgress: the run ends before the chain has advanced;
// Up returns once each CL's head advanced two slots, and not before.
func TestUpWaitsForChainProgress(t *testing.T) {
	eng := kurtosistest.Start(t)
	eng.APIC.Script(kurtosistest.EndEOF, successScript(t)...)
	chain := newFakeChain()
	chainServices(eng.APIC, beaconNode(t, chain, chain.wall), beaconNode(t, chain, chain.wall))
	dir := t.TempDir()
	log := &syncBuffer{}
	e, err := kurtosis.Up(context.Background(), chainParams(t, "healthy", dir, log, dockerAPI(t, nil))...)
	if err != nil {
		t.Fatalf("Up: %v\nlog:\n%s", err, log)
	}
	if w := chain.wall(); w < 2 {
		t.Errorf("Up returned at wall slot %d, before the heads could advance 2 slots", w)
	}
	if !strings.Contains(log.String(), "chain progressing: every CL's head advanced at least 2 slots") {
		t.Errorf("log:\n%s", log)
	}
	if _, err := kurtosis.ReadEndpoints(kurtosis.EndpointsPath(dir, "healthy")); err != nil || len(e.Nodes) != 2 {
		t.Errorf("endpoints: %v", err)
	}
}

// TestUpChainStallAfterRun: the run finished, then one CL's head stops.
func TestUpChainStallAfterRun(t *testing.T) {
	eng := kurtosistest.Start(t)
	eng.APIC.Script(kurtosistest.EndEOF, successScript(t)...)
	chain := newFakeChain()
	stuck := func() uint64 { return min(chain.wall(), 1) }
	chainServices(eng.APIC, beaconNode(t, chain, chain.wall), beaconNode(t, chain, stuck))
	log := &syncBuffer{}
	dir := t.TempDir()
	_, err := kurtosis.Up(context.Background(), chainParams(t, "half", dir, log, "tcp://127.0.0.1:1")...)
	if !errors.Is(err, kurtosis.ErrChainStalled) {
		t.Fatalf("Up error = %v, want ErrChainStalled\nlog:\n%s", err, log)
	}
	for _, want := range []string{"1 of 2 CLs stalled at wall slot 4", "cl-2-prysm-geth: head slot 1", "its container log (cl-2-prysm-geth--svccl-2-prysm-geth) was unavailable: docker engine API:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Up error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "cl-1-prysm-geth:") {
		t.Errorf("the healthy node is named stalled:\n%v", err)
	}
	if _, err := os.Stat(kurtosis.EndpointsPath(dir, "half")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("endpoints file written for a stalled devnet: %v", err)
	}
}

// TestUpChainTimeout: a chain whose genesis lies beyond the chain timeout
// fails saying so, not as a stall.
func TestUpChainTimeout(t *testing.T) {
	eng := kurtosistest.Start(t)
	eng.APIC.Script(kurtosistest.EndEOF, successScript(t)...)
	chain := fakeChain{genesis: time.Now().Add(time.Hour).Truncate(time.Second)}
	chainServices(eng.APIC, beaconNode(t, chain, chain.wall), beaconNode(t, chain, chain.wall))
	log := &syncBuffer{}
	p := append(chainParams(t, "later", t.TempDir(), log, dockerAPI(t, nil)), kurtosis.WithChainTimeout(300*time.Millisecond))
	_, err := kurtosis.Up(context.Background(), p...)
	if err == nil || errors.Is(err, kurtosis.ErrChainStalled) || !strings.Contains(err.Error(), "genesis is 1h0m0s away") && !strings.Contains(err.Error(), "genesis is 59m") {
		t.Errorf("Up error = %v, want a timeout saying genesis is an hour away\nlog:\n%s", err, log)
	}
}

// TestUpInterruptDuringChainWait: Ctrl-C while waiting for progress
// destroys the enclave Up created, as an interrupted run does.
func TestUpInterruptDuringChainWait(t *testing.T) {
	eng := kurtosistest.Start(t)
	eng.APIC.Script(kurtosistest.EndEOF, successScript(t)...)
	chain := fakeChain{genesis: time.Now().Add(time.Hour).Truncate(time.Second)}
	chainServices(eng.APIC, beaconNode(t, chain, chain.wall), beaconNode(t, chain, chain.wall))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		_, err := kurtosis.Up(ctx, chainParams(t, "waiting", t.TempDir(), log, dockerAPI(t, nil))...)
		done <- err
	}()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(log.String(), "chain watch: genesis") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Up error = %v, want context.Canceled", err)
	}
	if got := eng.Destroyed(); len(got) != 1 || got[0] != "waiting" {
		t.Errorf("destroyed = %v, want [waiting]\n%s", got, log)
	}
}
