// Package kurtosistest serves a fake Kurtosis engine and API container
// implemented from the SDK's own generated gRPC bindings, so the unmodified
// Kurtosis Go SDK v1.20.0 can be driven offline. The engine listens on
// 127.0.0.1:9710 because the SDK hard-codes that address
// (NewKurtosisContextFromLocalEngine); the API container on an ephemeral
// loopback port that the engine reports in EnclaveInfo, as the real engine
// reports the published port.
//
// What the fake does: GetEngineInfo, CreateEnclave, GetEnclavesByUuids,
// GetExistingAndHistoricalEnclaveIdentifiers, DestroyEnclave, StopEnclave
// on the engine; UploadStarlarkPackage (the SDK's chunked, SHA-1-chained
// file transfer, validated by grpc_file_streaming and unpacked with
// path_compression), RunStarlarkPackage (a scripted transcript of response
// lines) and GetServices (the real API container's lookup rules) on the API
// container. Everything else is Unimplemented.
//
// StartEnclave fakes the other side of a run: what `segdiff devnet up`
// leaves for the suite (an endpoints file naming nodes whose metrics, beacon
// API and EL JSON-RPC answer on loopback), so the suite's kurtosis backend
// can be run offline against healthy or broken nodes.
package kurtosistest

import (
	"context"
	"fmt"
	"net"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/adrg/xdg"
	rpc "github.com/kurtosis-tech/kurtosis/api/golang/core/kurtosis_core_rpc_api_bindings"
	erpc "github.com/kurtosis-tech/kurtosis/api/golang/engine/kurtosis_engine_rpc_api_bindings"
	"github.com/sirupsen/logrus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// EngineAddress is the SDK's fixed engine address.
const EngineAddress = "127.0.0.1:9710"

// Engine is the fake engine plus its one API container (shared by all
// enclaves; the SDK never tells an API container which enclave it is).
// Methods are safe for concurrent use.
type Engine struct {
	erpc.UnimplementedEngineServiceServer

	mu        sync.Mutex
	version   string
	enclaves  map[string]*erpc.EnclaveInfo // by uuid
	created   []string
	destroyed []string
	next      int
	apicPort  uint32
	slowMake  chan struct{} // non-nil: CreateEnclave hangs after creating
	slowDrop  chan struct{} // non-nil: the next DestroyEnclave is slow

	// APIC is the fake API container.
	APIC *APIContainer
}

// Start serves a fake engine on 127.0.0.1:9710 and an API container on an
// ephemeral port until test cleanup. It takes LockEnginePort, points HOME,
// XDG_CONFIG_HOME and TMPDIR at temporary directories the test removes (the
// SDK writes an archive cache and a contexts file under the first two, and
// leaves the upload-compression-cache-* folder of every package upload in
// the third), and skips the test when the port is held by something else,
// e.g. a real engine. It sets the logrus level (the SDK's logger) to warn.
func Start(t testing.TB) *Engine {
	t.Helper()
	LockEnginePort(t)
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("TMPDIR", t.TempDir())
	xdg.Reload()
	// The SDK logs every upload at info level through logrus' global logger.
	logrus.SetLevel(logrus.WarnLevel)

	apicLis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fake api container: listen: %v", err)
	}
	engLis, err := net.Listen("tcp", EngineAddress)
	if err != nil {
		apicLis.Close()
		t.Skipf("fake kurtosis engine: %s is in use (%v); a real engine (`kurtosis engine stop`) or another process holds it", EngineAddress, err)
	}
	e := &Engine{
		version:  "1.20.0",
		enclaves: map[string]*erpc.EnclaveInfo{},
		apicPort: uint32(apicLis.Addr().(*net.TCPAddr).Port),
		APIC:     newAPIContainer(),
	}
	apicSrv := grpc.NewServer()
	rpc.RegisterApiContainerServiceServer(apicSrv, e.APIC)
	engSrv := grpc.NewServer()
	erpc.RegisterEngineServiceServer(engSrv, e)
	go func() { _ = apicSrv.Serve(apicLis) }()
	go func() { _ = engSrv.Serve(engLis) }()
	t.Cleanup(func() {
		engSrv.Stop()
		apicSrv.Stop()
	})
	return e
}

// SetVersion sets what GetEngineInfo reports (default "1.20.0").
func (e *Engine) SetVersion(v string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.version = v
}

// AddEnclave registers an existing running enclave, as if created earlier.
func (e *Engine) AddEnclave(name string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.addLocked(name)
}

func (e *Engine) addLocked(name string) string {
	e.next++
	uuid := fmt.Sprintf("%08x%024x", e.next, e.next)
	e.enclaves[uuid] = &erpc.EnclaveInfo{
		EnclaveUuid:        uuid,
		Name:               name,
		ShortenedUuid:      uuid[:12],
		ContainersStatus:   erpc.EnclaveContainersStatus_EnclaveContainersStatus_RUNNING,
		ApiContainerStatus: erpc.EnclaveAPIContainerStatus_EnclaveAPIContainerStatus_RUNNING,
		ApiContainerInfo: &erpc.EnclaveAPIContainerInfo{
			ContainerId: "apic-" + uuid[:12], IpInsideEnclave: "172.16.0.2", GrpcPortInsideEnclave: 7443, BridgeIpAddress: "172.17.0.1",
		},
		ApiContainerHostMachineInfo: &erpc.EnclaveAPIContainerHostMachineInfo{IpOnHostMachine: "127.0.0.1", GrpcPortOnHostMachine: e.apicPort},
		CreationTime:                timestamppb.Now(),
		Mode:                        erpc.EnclaveMode_TEST,
	}
	return uuid
}

// Enclaves lists the names of existing enclaves, sorted.
func (e *Engine) Enclaves() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, info := range e.enclaves {
		out = append(out, info.GetName())
	}
	sort.Strings(out)
	return out
}

// Created and Destroyed list enclave names in call order.
func (e *Engine) Created() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.created...)
}

// Destroyed lists the names of destroyed enclaves in call order.
func (e *Engine) Destroyed() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.destroyed...)
}

// GetEngineInfo implements the engine RPC.
func (e *Engine) GetEngineInfo(context.Context, *emptypb.Empty) (*erpc.GetEngineInfoResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return &erpc.GetEngineInfoResponse{EngineVersion: e.version}, nil
}

// HangCreate makes CreateEnclave create the enclave and then hang until the
// client gives up, as a slow engine does; the returned channel is closed
// once the enclave exists.
func (e *Engine) HangCreate() <-chan struct{} { return e.arm(&e.slowMake) }

// arm sets *hook to a new channel, which the hooked RPC closes on arrival.
func (e *Engine) arm(hook *chan struct{}) <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	*hook = make(chan struct{})
	return *hook
}

// CreateEnclave implements the engine RPC; a duplicate name is an error, as
// in the real engine.
func (e *Engine) CreateEnclave(ctx context.Context, args *erpc.CreateEnclaveArgs) (*erpc.CreateEnclaveResponse, error) {
	e.mu.Lock()
	for _, info := range e.enclaves {
		if info.GetName() == args.GetEnclaveName() {
			e.mu.Unlock()
			return nil, status.Errorf(codes.AlreadyExists, "enclave with name %q already exists", args.GetEnclaveName())
		}
	}
	e.created = append(e.created, args.GetEnclaveName())
	uuid := e.addLocked(args.GetEnclaveName())
	resp := &erpc.CreateEnclaveResponse{EnclaveInfo: e.enclaves[uuid]}
	slow := e.slowMake
	e.mu.Unlock()
	if slow != nil {
		close(slow)
		<-ctx.Done()
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	return resp, nil
}

// GetEnclavesByUuids implements the engine RPC (empty list = all).
func (e *Engine) GetEnclavesByUuids(_ context.Context, args *erpc.GetEnclavesByUuidsArgs) (*erpc.GetEnclavesResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[string]*erpc.EnclaveInfo{}
	if len(args.GetEnclaveUuids()) == 0 {
		for uuid, info := range e.enclaves {
			out[uuid] = info
		}
	}
	for _, uuid := range args.GetEnclaveUuids() {
		if info, ok := e.enclaves[uuid]; ok {
			out[uuid] = info
		}
	}
	return &erpc.GetEnclavesResponse{EnclaveInfo: out}, nil
}

// GetExistingAndHistoricalEnclaveIdentifiers implements the engine RPC.
func (e *Engine) GetExistingAndHistoricalEnclaveIdentifiers(context.Context, *emptypb.Empty) (*erpc.GetExistingAndHistoricalEnclaveIdentifiersResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := &erpc.GetExistingAndHistoricalEnclaveIdentifiersResponse{}
	for uuid, info := range e.enclaves {
		out.AllIdentifiers = append(out.AllIdentifiers, &erpc.EnclaveIdentifiers{EnclaveUuid: uuid, Name: info.GetName(), ShortenedUuid: info.GetShortenedUuid()})
	}
	return out, nil
}

// SlowDestroy makes the next DestroyEnclave take 200 ms, as a real engine
// removing containers does, and give up if the client does meanwhile; the
// returned channel is closed when the call arrives.
func (e *Engine) SlowDestroy() <-chan struct{} { return e.arm(&e.slowDrop) }

// DestroyEnclave implements the engine RPC (identifier = name, uuid or
// shortened uuid).
func (e *Engine) DestroyEnclave(ctx context.Context, args *erpc.DestroyEnclaveArgs) (*emptypb.Empty, error) {
	e.mu.Lock()
	slow := e.slowDrop
	e.slowDrop = nil
	e.mu.Unlock()
	if slow != nil {
		close(slow)
		select {
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	id := args.GetEnclaveIdentifier()
	for uuid, info := range e.enclaves {
		if info.GetName() == id || uuid == id || info.GetShortenedUuid() == id {
			delete(e.enclaves, uuid)
			e.destroyed = append(e.destroyed, info.GetName())
			return &emptypb.Empty{}, nil
		}
	}
	return nil, status.Errorf(codes.NotFound, "no enclave %q", id)
}

// StopEnclave implements the engine RPC.
func (e *Engine) StopEnclave(_ context.Context, args *erpc.StopEnclaveArgs) (*emptypb.Empty, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, info := range e.enclaves {
		if info.GetName() == args.GetEnclaveIdentifier() || info.GetEnclaveUuid() == args.GetEnclaveIdentifier() {
			info.ContainersStatus = erpc.EnclaveContainersStatus_EnclaveContainersStatus_STOPPED
			info.ApiContainerStatus = erpc.EnclaveAPIContainerStatus_EnclaveAPIContainerStatus_STOPPED
			return &emptypb.Empty{}, nil
		}
	}
	return nil, status.Errorf(codes.NotFound, "no enclave %q", args.GetEnclaveIdentifier())
}
