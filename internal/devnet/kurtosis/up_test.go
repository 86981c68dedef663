package kurtosis_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/devnet/kurtosis"
	"github.com/segdiff/segdiff/internal/devnet/kurtosis/kurtosistest"
)

// TestUpDiscoverDown drives the unmodified SDK against the fake engine
// through the whole lifecycle.
func TestUpDiscoverDown(t *testing.T) {
	eng := kurtosistest.Start(t)
	eng.APIC.Script(kurtosistest.EndEOF, successScript(t)...)
	addServices(eng.APIC)
	pkg := writePackage(t)
	params := writeFile(t, "segmented.yaml", testParams)
	dir := t.TempDir()
	log := &syncBuffer{}

	e, err := kurtosis.Up(context.Background(), upParams(t, "segdiff-test", pkg, params, dir, log)...)
	if err != nil {
		t.Fatalf("Up: %v\nlog:\n%s", err, log)
	}

	// What reached the API container.
	id, files := eng.APIC.Package()
	if id != testPackageID {
		t.Errorf("uploaded package id = %q, want %q", id, testPackageID)
	}
	if got, want := kurtosistest.SortedFiles(files), []string{".kurtosisignore", "kurtosis.yml", "main.star", "src/helper.star"}; !reflect.DeepEqual(got, want) {
		t.Errorf("uploaded files = %v, want %v", got, want)
	}
	args := eng.APIC.RunArgs()
	if args.GetPackageId() != testPackageID || args.GetClonePackage() || args.GetAllowPrivilegedMode() {
		t.Errorf("run args: package %q clone %v privileged %v, want %q false false", args.GetPackageId(), args.GetClonePackage(), args.GetAllowPrivilegedMode(), testPackageID)
	}
	var sent map[string]any
	if err := json.Unmarshal([]byte(args.GetSerializedParams()), &sent); err != nil {
		t.Fatalf("serialized params are not JSON: %v: %s", err, args.GetSerializedParams())
	}
	if sd, _ := sent["segdiff"].(map[string]any); sd["mode"] != "segmented" {
		t.Errorf("serialized params lost segdiff.mode: %s", args.GetSerializedParams())
	}
	if !strings.Contains(args.GetSerializedParams(), `"heze_fork_epoch":18446744073709551615`) {
		t.Errorf("serialized params changed 2^64-1: %s", args.GetSerializedParams())
	}
	if got := eng.Created(); !reflect.DeepEqual(got, []string{"segdiff-test"}) {
		t.Errorf("created enclaves = %v", got)
	}

	// Discovery and the endpoints file.
	want := &kurtosis.Endpoints{
		Version: 1, Enclave: "segdiff-test", EnclaveUUID: e.EnclaveUUID, ParamsFile: params,
		Mode: devnet.ModeSegmented, SecondsPerSlot: 12, SlotDurationMS: 12000, PayloadDueBPS: 5000,
		Nodes: []kurtosis.EndpointNode{
			{Node: devnet.Node{ID: "cl-1-prysm-geth", Roles: []devnet.Role{"node", "proposer", "builder"}, LinkClass: devnet.LinkDatacenter,
				MetricsURL: "http://127.0.0.1:33002/metrics", BeaconURL: "http://127.0.0.1:33001", Client: "prysm"},
				CLService: "cl-1-prysm-geth", ELService: "el-1-geth-prysm", ELRPCURL: "http://127.0.0.1:33003", ELMetricsURL: "http://127.0.0.1:33004"},
			// cl-2's participant plays a withholder: the role joins its
			// roles, so the suite's verdicts leave it out.
			{Node: devnet.Node{ID: "cl-2-prysm-geth", Roles: []devnet.Role{"node", "withholder"}, LinkClass: devnet.LinkHome,
				MetricsURL: "http://127.0.0.1:33102/metrics", BeaconURL: "http://127.0.0.1:33101", Client: "prysm"},
				CLService: "cl-2-prysm-geth", ELService: "el-2-geth-prysm", ELRPCURL: "http://127.0.0.1:33103"},
		},
		PrometheusURL: "http://127.0.0.1:33010", GrafanaURL: "http://127.0.0.1:33011", WrittenAt: e.WrittenAt,
	}
	if e.EnclaveUUID == "" || e.WrittenAt.IsZero() {
		t.Errorf("Up left enclave_uuid %q / written_at %v empty", e.EnclaveUUID, e.WrittenAt)
	}
	if !reflect.DeepEqual(e, want) {
		t.Errorf("Up endpoints =\n%+v\nwant\n%+v", e, want)
	}
	onDisk, err := kurtosis.ReadEndpoints(kurtosis.EndpointsPath(dir, "segdiff-test"))
	if err != nil {
		t.Fatalf("ReadEndpoints: %v", err)
	}
	if !reflect.DeepEqual(onDisk, want) {
		t.Errorf("endpoints file =\n%+v\nwant\n%+v", onDisk, want)
	}
	for _, s := range []string{"warning: fake warning", "info: fake api container", "[1/2] Starting execution", "> Adding service cl-1-prysm-geth", "run finished: 2 instructions"} {
		if !strings.Contains(log.String(), s) {
			t.Errorf("log lacks %q:\n%s", s, log)
		}
	}

	// Status lists services and the endpoints.
	st, err := kurtosis.GetStatus(context.Background(), upParams(t, "segdiff-test", pkg, params, dir, log)...)
	if err != nil {
		t.Fatalf("GetStatus: %v", err)
	}
	if len(st.Services) != 6 || st.Services[0].Name != "cl-1-prysm-geth" || st.Services[0].PublicPorts["metrics"] != 33002 || st.Endpoints == nil {
		t.Errorf("GetStatus = %+v", st)
	}
	var out strings.Builder
	st.Print(&out)
	if !strings.Contains(out.String(), "segdiff-prometheus") || !strings.Contains(out.String(), "http://127.0.0.1:33002/metrics") {
		t.Errorf("Status.Print:\n%s", out.String())
	}

	// Down destroys and removes the file; a second Down is a no-op.
	destroyed, err := kurtosis.Down(context.Background(), upParams(t, "segdiff-test", pkg, params, dir, log)...)
	if err != nil || !destroyed {
		t.Fatalf("Down = %v, %v; want true, nil", destroyed, err)
	}
	if got := eng.Destroyed(); !reflect.DeepEqual(got, []string{"segdiff-test"}) {
		t.Errorf("destroyed = %v", got)
	}
	if _, err := os.Stat(kurtosis.EndpointsPath(dir, "segdiff-test")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("endpoints file still there after Down: %v", err)
	}
	destroyed, err = kurtosis.Down(context.Background(), upParams(t, "segdiff-test", pkg, params, dir, log)...)
	if err != nil || destroyed {
		t.Fatalf("second Down = %v, %v; want false, nil", destroyed, err)
	}
	if _, err := kurtosis.GetStatus(context.Background(), upParams(t, "segdiff-test", pkg, params, dir, log)...); !errors.Is(err, kurtosis.ErrNoEnclave) {
		t.Errorf("GetStatus after Down: %v, want ErrNoEnclave", err)
	}
}

func TestUpFailures(t *testing.T) {
	I := kurtosistest.Interpreting
	tests := []struct {
		name     string
		ending   kurtosistest.Ending
		lines    []*kurtosistest.Line
		services bool
		wantErr  error
		wantMsg  string
	}{
		{name: "interpretation error", lines: kurtosistest.Lines(I(), []*kurtosistest.Line{
			kurtosistest.InterpretationError("Evaluation error: key \"mode\" not in dict"), kurtosistest.Failure()}),
			wantErr: kurtosis.ErrInterpretation, wantMsg: `key "mode" not in dict`},
		{name: "validation errors", lines: kurtosistest.Lines(I(), []*kurtosistest.Line{
			kurtosistest.ValidationError("image 'segdiff/prysm:seg' not found"), kurtosistest.ValidationError("port 'http' reused"), kurtosistest.Failure()}),
			wantErr: kurtosis.ErrValidation, wantMsg: "port 'http' reused"},
		{name: "execution error", lines: kurtosistest.Lines(I(),
			kurtosistest.Instruction(1, 3, "add_service", "Adding service cl-1", "ok"),
			[]*kurtosistest.Line{kurtosistest.ExecutionError("service cl-2 failed readiness check"), kurtosistest.Failure()}),
			wantErr: kurtosis.ErrExecution, wantMsg: "readiness"},
		{name: "unsuccessful run without error line", lines: kurtosistest.Lines(I(), []*kurtosistest.Line{kurtosistest.Failure()}),
			wantErr: kurtosis.ErrRunFailed},
		{name: "broken stream", ending: kurtosistest.EndBroken,
			lines:   kurtosistest.Lines(I(), kurtosistest.Instruction(1, 3, "add_service", "Adding service cl-1", "ok")),
			wantErr: kurtosis.ErrStreamEnded, wantMsg: "after 1 instructions"},
		{name: "stream ends without run-finished", lines: kurtosistest.Lines(I()),
			wantErr: kurtosis.ErrStreamEnded},
		{name: "output breaks the contract", services: true, lines: kurtosistest.Lines(I(), []*kurtosistest.Line{
			kurtosistest.Success(runOutput(t, func(m map[string]any) { delete(m, "prometheus_service") }))}),
			wantErr: kurtosis.ErrBadOutput, wantMsg: "prometheus_service"},
		{name: "service without public ports", services: false, lines: successScript(t),
			wantMsg: "no public address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := kurtosistest.Start(t)
			eng.APIC.Script(tt.ending, tt.lines...)
			if tt.services {
				addServices(eng.APIC)
			} else {
				for _, s := range []string{"cl-1-prysm-geth", "cl-2-prysm-geth", "el-1-geth-prysm", "el-2-geth-prysm", "segdiff-prometheus", "segdiff-grafana"} {
					eng.APIC.AddPrivateService(s)
				}
			}
			dir := t.TempDir()
			log := &syncBuffer{}
			_, err := kurtosis.Up(context.Background(), upParams(t, "failing", writePackage(t), writeFile(t, "p.yaml", testParams), dir, log)...)
			if err == nil {
				t.Fatalf("Up succeeded; log:\n%s", log)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Up error = %v, want %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("Up error = %q, want it to contain %q", err, tt.wantMsg)
			}
			// A failed (not interrupted) run keeps the enclave for inspection.
			if got := eng.Destroyed(); len(got) != 0 {
				t.Errorf("enclaves destroyed after a failed run: %v", got)
			}
			if !strings.Contains(log.String(), "kept for inspection") {
				t.Errorf("log does not say the enclave was kept:\n%s", log)
			}
			if _, err := os.Stat(kurtosis.EndpointsPath(dir, "failing")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("endpoints file written by a failed Up: %v", err)
			}
		})
	}
}

// TestUpInterruptDestroysEnclave: Ctrl-C while the package runs leaves
// nothing behind.
func TestUpInterruptDestroysEnclave(t *testing.T) {
	eng := kurtosistest.Start(t)
	eng.APIC.Script(kurtosistest.EndHang, kurtosistest.Lines(kurtosistest.Interpreting(),
		kurtosistest.Instruction(1, 30, "add_service", "Adding service cl-1", "ok"))...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	log := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		_, err := kurtosis.Up(ctx, upParams(t, "interrupted", writePackage(t), writeFile(t, "p.yaml", testParams), dir, log)...)
		done <- err
	}()
	select {
	case <-eng.APIC.Running():
	case err := <-done:
		t.Fatalf("Up returned before the run hung: %v\n%s", err, log)
	case <-time.After(20 * time.Second):
		t.Fatalf("run never started; log:\n%s", log)
	}
	cancel()
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Up did not return after cancel")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Up error = %v, want context.Canceled", err)
	}
	if got := eng.Destroyed(); !reflect.DeepEqual(got, []string{"interrupted"}) {
		t.Errorf("destroyed = %v, want [interrupted]", got)
	}
	if got := eng.Enclaves(); len(got) != 0 {
		t.Errorf("enclaves left = %v", got)
	}
	if !strings.Contains(log.String(), "interrupted: destroying enclave") {
		t.Errorf("log:\n%s", log)
	}
}

func TestUpReusesEnclave(t *testing.T) {
	eng := kurtosistest.Start(t)
	eng.AddEnclave("kept")
	eng.APIC.Script(kurtosistest.EndEOF, successScript(t)...)
	addServices(eng.APIC)
	log := &syncBuffer{}
	if _, err := kurtosis.Up(context.Background(), upParams(t, "kept", writePackage(t), writeFile(t, "p.yaml", testParams), t.TempDir(), log)...); err != nil {
		t.Fatalf("Up: %v\n%s", err, log)
	}
	if got := eng.Created(); len(got) != 0 {
		t.Errorf("Up created %v although the enclave existed", got)
	}

	// An interrupted re-run leaves the reused enclave alone.
	eng.APIC.Script(kurtosistest.EndHang, kurtosistest.Interpreting()...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := kurtosis.Up(ctx, upParams(t, "kept", writePackage(t), writeFile(t, "p.yaml", testParams), t.TempDir(), log)...)
		done <- err
	}()
	<-eng.APIC.Running()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Up error = %v, want context.Canceled", err)
	}
	if got := eng.Destroyed(); len(got) != 0 {
		t.Errorf("interrupting a reused enclave destroyed %v", got)
	}
}

func TestUpFresh(t *testing.T) {
	eng := kurtosistest.Start(t)
	eng.AddEnclave("again")
	eng.APIC.Script(kurtosistest.EndEOF, successScript(t)...)
	addServices(eng.APIC)
	log := &syncBuffer{}
	params := append(upParams(t, "again", writePackage(t), writeFile(t, "p.yaml", testParams), t.TempDir(), log), kurtosis.WithFresh(true))
	if _, err := kurtosis.Up(context.Background(), params...); err != nil {
		t.Fatalf("Up: %v\n%s", err, log)
	}
	if d, c := eng.Destroyed(), eng.Created(); !reflect.DeepEqual(d, []string{"again"}) || !reflect.DeepEqual(c, []string{"again"}) {
		t.Errorf("destroyed %v created %v, want [again] [again]", d, c)
	}
}

func TestUpLinkClassesRunPrivileged(t *testing.T) {
	eng := kurtosistest.Start(t)
	eng.APIC.Script(kurtosistest.EndEOF, successScript(t)...)
	addServices(eng.APIC)
	log := &syncBuffer{}
	params := writeFile(t, "p.yaml", testParams+"  link_classes:\n    default: home\n")
	if _, err := kurtosis.Up(context.Background(), upParams(t, "shaped", writePackage(t), params, t.TempDir(), log)...); err != nil {
		t.Fatalf("Up: %v\n%s", err, log)
	}
	if !eng.APIC.RunArgs().GetAllowPrivilegedMode() {
		t.Error("link_classes set but the run was not privileged")
	}
}

func TestUpResolvesClientImages(t *testing.T) {
	eng := kurtosistest.Start(t)
	eng.APIC.Script(kurtosistest.EndEOF, successScript(t)...)
	addServices(eng.APIC)
	manifest := writeFile(t, "clients.yaml", `version: 1
clients:
  - name: prysm-segmented
    layer: cl
    type: prysm
    image: segdiff/prysm:segmented-test
    cl_extra_params: ["--payload-diffusion=segmented"]
    roles: {withholder: ["--segdiff-dev-role=withholder"]}
`)
	params := writeFile(t, "p.yaml", strings.Replace(testParams, "cl_type: prysm", "cl_type: prysm\n    cl_image: \"@clients/prysm-segmented\"\n    segdiff: {role: withholder}", 1))
	log := &syncBuffer{}
	p := append(upParams(t, "patched", writePackage(t), params, t.TempDir(), log), kurtosis.WithManifest(manifest))
	if _, err := kurtosis.Up(context.Background(), p...); err != nil {
		t.Fatalf("Up: %v\n%s", err, log)
	}
	sent := eng.APIC.RunArgs().GetSerializedParams()
	if !strings.Contains(sent, `"cl_image":"segdiff/prysm:segmented-test"`) || !strings.Contains(sent, `--payload-diffusion=segmented`) || strings.Contains(sent, "@clients/") {
		t.Errorf("params not resolved: %s", sent)
	}
	// The role's flag is appended; the section stays for the package, which
	// reports the role and removes the section before ethereum-package.
	if !strings.Contains(sent, `"--segdiff-dev-role=withholder"`) || !strings.Contains(sent, `"segdiff":{"role":"withholder"}`) {
		t.Errorf("role not resolved: %s", sent)
	}
}

// Failures before the engine is contacted need no engine at all.
func TestUpRejectsBadInputBeforeConnecting(t *testing.T) {
	checkErr := errors.New("participants[0].cl_type: unknown client")
	tests := []struct {
		name    string
		params  string
		extra   []kurtosis.Parameter
		wantMsg string
	}{
		{name: "params check fails", params: testParams, extra: []kurtosis.Parameter{kurtosis.WithParamsCheck(func(string) error { return checkErr })}, wantMsg: "unknown client"},
		{name: "unknown client image", params: strings.Replace(testParams, "cl_type: prysm", "cl_type: prysm\n    cl_image: \"@clients/nope\"", 1), wantMsg: "absent-clients.yaml"},
		{name: "a role is resolved from the manifest even without an image reference",
			params: strings.Replace(testParams, "cl_type: prysm", "cl_type: prysm\n    segdiff: {role: mute}", 1), wantMsg: "absent-clients.yaml"},
		{name: "empty params", params: "# nothing\n", wantMsg: "empty document"},
		{name: "not yaml", params: "participants: [\n", wantMsg: "p.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := &syncBuffer{}
			p := append(upParams(t, "x", writePackage(t), writeFile(t, "p.yaml", tt.params), t.TempDir(), log), tt.extra...)
			_, err := kurtosis.Up(context.Background(), p...)
			if err == nil || !strings.Contains(err.Error(), tt.wantMsg) || errors.Is(err, kurtosis.ErrNoEngine) {
				t.Errorf("Up error = %v, want one naming %q before connecting", err, tt.wantMsg)
			}
		})
	}
	if _, err := kurtosis.Up(context.Background(), kurtosis.WithParamsFile("p.yaml")); err == nil || !strings.Contains(err.Error(), "no enclave name specified") {
		t.Errorf("Up without enclave: %v", err)
	}
	if _, err := kurtosis.Up(context.Background(), kurtosis.WithEnclave("x")); err == nil || !strings.Contains(err.Error(), "no params file specified") {
		t.Errorf("Up without params: %v", err)
	}
}

// TestNoEngine_FailsFast: with nothing on 127.0.0.1:9710 every command fails
// within seconds and says how to start an engine.
func TestNoEngine_FailsFast(t *testing.T) {
	kurtosistest.LockEnginePort(t)
	if l, err := net.Listen("tcp", kurtosistest.EngineAddress); err != nil {
		t.Skipf("%s is in use (%v); cannot test the no-engine path here", kurtosistest.EngineAddress, err)
	} else {
		l.Close()
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	params := []kurtosis.Parameter{kurtosis.WithEnclave("none"), kurtosis.WithParamsFile(writeFile(t, "p.yaml", testParams)),
		kurtosis.WithPackageDir(writePackage(t)), kurtosis.WithLog(&syncBuffer{}), kurtosis.WithEndpointsDir(t.TempDir())}
	calls := map[string]func() error{
		"up":     func() error { _, err := kurtosis.Up(context.Background(), params...); return err },
		"down":   func() error { _, err := kurtosis.Down(context.Background(), params...); return err },
		"status": func() error { _, err := kurtosis.GetStatus(context.Background(), params...); return err },
	}
	for name, call := range calls {
		start := time.Now()
		err := call()
		elapsed := time.Since(start)
		if !errors.Is(err, kurtosis.ErrNoEngine) {
			t.Errorf("%s error = %v, want ErrNoEngine", name, err)
			continue
		}
		if !strings.Contains(err.Error(), "kurtosis engine start") {
			t.Errorf("%s error does not say how to start an engine: %v", name, err)
		}
		if elapsed > 5*time.Second {
			t.Errorf("%s took %v to fail, want seconds", name, elapsed)
		}
	}
}

func TestEngineVersionMismatch(t *testing.T) {
	eng := kurtosistest.Start(t)
	eng.SetVersion("1.19.3")
	_, err := kurtosis.Down(context.Background(), kurtosis.WithEnclave("x"), kurtosis.WithEndpointsDir(t.TempDir()), kurtosis.WithLog(&syncBuffer{}))
	if !errors.Is(err, kurtosis.ErrNoEngine) || !strings.Contains(err.Error(), "1.19.3") {
		t.Errorf("Down against engine 1.19.3: %v, want ErrNoEngine naming the version", err)
	}
}

// TestUpInterruptDuringCreate: the engine made the enclave but Ctrl-C came
// before its answer; Up still removes it.
func TestUpInterruptDuringCreate(t *testing.T) {
	eng := kurtosistest.Start(t)
	made := eng.HangCreate()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		_, err := kurtosis.Up(ctx, upParams(t, "half", writePackage(t), writeFile(t, "p.yaml", testParams), t.TempDir(), log)...)
		done <- err
	}()
	select {
	case <-made:
	case err := <-done:
		t.Fatalf("Up returned before creating: %v\n%s", err, log)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Up error = %v, want a cancellation", err)
	}
	if got := eng.Enclaves(); len(got) != 0 {
		t.Errorf("enclaves left after an interrupted create: %v\n%s", got, log)
	}
}

// TestSilentEngine_FailsFast: something accepts on 9710 but never speaks
// gRPC; the connect timeout bounds the wait.
func TestSilentEngine_FailsFast(t *testing.T) {
	kurtosistest.LockEnginePort(t)
	l, err := net.Listen("tcp", kurtosistest.EngineAddress)
	if err != nil {
		t.Skipf("%s is in use (%v)", kurtosistest.EngineAddress, err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
		}
	}()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	start := time.Now()
	_, err = kurtosis.Down(context.Background(), kurtosis.WithEnclave("x"), kurtosis.WithLog(&syncBuffer{}),
		kurtosis.WithConnectTimeout(300*time.Millisecond), kurtosis.WithEndpointsDir(t.TempDir()))
	if !errors.Is(err, kurtosis.ErrNoEngine) || !strings.Contains(err.Error(), "no answer within 300ms") {
		t.Errorf("Down against a silent port: %v", err)
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("took %v, want about the 300ms connect timeout", elapsed)
	}
}
