package kurtosistest

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/kurtosis-tech/kurtosis/api/golang/core/kurtosis_core_rpc_api_bindings"
	"github.com/kurtosis-tech/kurtosis/api/golang/core/lib/binding_constructors"
	"github.com/kurtosis-tech/kurtosis/grpc-file-transfer/golang/grpc_file_streaming"
	"github.com/kurtosis-tech/kurtosis/path-compression"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
)

// Line is one Starlark run response line.
type Line = kurtosis_core_rpc_api_bindings.StarlarkRunResponseLine

type rpcLine = Line

// Ending says how a scripted run's stream ends after its lines.
type Ending int

// Stream endings.
const (
	// EndEOF closes the stream normally.
	EndEOF Ending = iota
	// EndBroken fails the stream with a gRPC Unavailable error, as when the
	// API container dies mid-run.
	EndBroken
	// EndHang blocks until the client cancels (Ctrl-C tests); Running is
	// closed when the hang begins.
	EndHang
)

// APIContainer is the fake API container. Set the script and services
// before the run; inspect what arrived afterwards. Safe for concurrent use.
type APIContainer struct {
	kurtosis_core_rpc_api_bindings.UnimplementedApiContainerServiceServer

	mu       sync.Mutex
	lines    []*rpcLine
	ending   Ending
	running  chan struct{}
	services map[string]*kurtosis_core_rpc_api_bindings.ServiceInfo // by name
	runArgs  *kurtosis_core_rpc_api_bindings.RunStarlarkPackageArgs
	pkgName  string
	pkgFiles map[string][]byte
	// uploads holds every package uploaded, by id: the root package and
	// the local replace targets the SDK uploads after it.
	uploads map[string]map[string][]byte
}

func newAPIContainer() *APIContainer {
	return &APIContainer{running: make(chan struct{}), services: map[string]*kurtosis_core_rpc_api_bindings.ServiceInfo{},
		uploads: map[string]map[string][]byte{}}
}

// Script sets the response lines of the next runs and how the stream ends.
func (a *APIContainer) Script(ending Ending, lines ...*rpcLine) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.lines, a.ending = lines, ending
}

// Running is closed when a run with EndHang starts hanging.
func (a *APIContainer) Running() <-chan struct{} { return a.running }

// AddService registers a service with a private IP and the given public
// ports on 127.0.0.1 (port id → host port; private ports mirror them).
func (a *APIContainer) AddService(name string, ports map[string]uint32) {
	a.addService(name, "127.0.0.1", ports)
}

// AddPrivateService registers a service without public ports (Kubernetes
// without a gateway).
func (a *APIContainer) AddPrivateService(name string) {
	a.addService(name, "", nil)
}

func (a *APIContainer) addService(name, publicIP string, ports map[string]uint32) {
	a.mu.Lock()
	defer a.mu.Unlock()
	public := map[string]*kurtosis_core_rpc_api_bindings.Port{}
	private := map[string]*kurtosis_core_rpc_api_bindings.Port{}
	for id, n := range ports {
		public[id] = binding_constructors.NewPort(n, kurtosis_core_rpc_api_bindings.Port_TCP, "http", "")
		private[id] = binding_constructors.NewPort(4000+uint32(len(private)), kurtosis_core_rpc_api_bindings.Port_TCP, "http", "")
	}
	uuid := "svc" + name
	a.services[name] = binding_constructors.NewServiceInfo(uuid, name, uuid, "172.16.0.10", private, publicIP, public,
		kurtosis_core_rpc_api_bindings.ServiceStatus_RUNNING, nil, nil, 0, 0, 0, 0, nil, nil, nil, nil, false, false, nil)
}

// RunArgs returns the arguments of the last RunStarlarkPackage call.
func (a *APIContainer) RunArgs() *kurtosis_core_rpc_api_bindings.RunStarlarkPackageArgs {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.runArgs
}

// Package returns the package of the last run (before a run: the first
// package uploaded), its id and its files (path relative to the package
// root → content).
func (a *APIContainer) Package() (string, map[string][]byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.runArgs != nil {
		id := a.runArgs.GetPackageId()
		return id, a.uploads[id]
	}
	return a.pkgName, a.pkgFiles
}

// Uploaded returns the files of the package uploaded under id, nil if none
// was: the SDK uploads a kurtosis.yml replace that is a local path under the
// replaced package's id.
func (a *APIContainer) Uploaded(id string) map[string][]byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.uploads[id]
}

// Uploads lists the ids of every package uploaded, sorted.
func (a *APIContainer) Uploads() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := make([]string, 0, len(a.uploads))
	for id := range a.uploads {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// UploadStarlarkPackage receives the SDK's chunked upload, checking the
// SHA-1 chain, and unpacks the archive.
func (a *APIContainer) UploadStarlarkPackage(stream kurtosis_core_rpc_api_bindings.ApiContainerService_UploadStarlarkPackageServer) error {
	var name string
	server := grpc_file_streaming.NewServerStream[kurtosis_core_rpc_api_bindings.StreamedDataChunk, emptypb.Empty](stream)
	return server.ReceiveData("package",
		func(chunk *kurtosis_core_rpc_api_bindings.StreamedDataChunk) ([]byte, string, error) {
			if name == "" {
				name = chunk.GetMetadata().GetName()
			}
			return chunk.GetData(), chunk.GetPreviousChunkHash(), nil
		},
		func(content io.Reader) (*emptypb.Empty, error) {
			files, err := unpack(content)
			if err != nil {
				return nil, status.Errorf(codes.InvalidArgument, "unpack package %q: %v", name, err)
			}
			a.mu.Lock()
			if a.pkgName == "" {
				a.pkgName, a.pkgFiles = name, files
			}
			a.uploads[name] = files
			a.mu.Unlock()
			return &emptypb.Empty{}, nil
		})
}

func unpack(content io.Reader) (map[string][]byte, error) {
	dir, err := os.MkdirTemp("", "kurtosistest-pkg-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	archive := filepath.Join(dir, "package.tgz")
	data, err := io.ReadAll(content)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(archive, data, 0o600); err != nil {
		return nil, err
	}
	out := filepath.Join(dir, "out")
	if err := path_compression.Unarchive(archive, out); err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	err = filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(out, path)
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	return files, err
}

// RunStarlarkPackage records the arguments and plays the script. The
// package must have been uploaded first, under the requested id.
func (a *APIContainer) RunStarlarkPackage(args *kurtosis_core_rpc_api_bindings.RunStarlarkPackageArgs, stream kurtosis_core_rpc_api_bindings.ApiContainerService_RunStarlarkPackageServer) error {
	a.mu.Lock()
	a.runArgs = proto.Clone(args).(*kurtosis_core_rpc_api_bindings.RunStarlarkPackageArgs)
	lines, ending := a.lines, a.ending
	_, uploaded := a.uploads[args.GetPackageId()]
	a.mu.Unlock()
	if !uploaded {
		return status.Errorf(codes.FailedPrecondition, "package %q was not uploaded (have %q)", args.GetPackageId(), a.Uploads())
	}
	for _, l := range lines {
		if err := stream.Send(l); err != nil {
			return err
		}
	}
	switch ending {
	case EndBroken:
		return status.Error(codes.Unavailable, "api container went away")
	case EndHang:
		close(a.running)
		<-stream.Context().Done()
		return stream.Context().Err()
	}
	return nil
}

// GetServices mirrors the real API container: with identifiers (name or
// uuid) each must exist and the answer is keyed by the identifier given;
// without, every service keyed by name.
func (a *APIContainer) GetServices(_ context.Context, args *kurtosis_core_rpc_api_bindings.GetServicesArgs) (*kurtosis_core_rpc_api_bindings.GetServicesResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]*kurtosis_core_rpc_api_bindings.ServiceInfo{}
	if len(args.GetServiceIdentifiers()) == 0 {
		for name, info := range a.services {
			out[name] = info
		}
		return binding_constructors.NewGetServicesResponse(out), nil
	}
	for id := range args.GetServiceIdentifiers() {
		info, ok := a.services[id]
		if !ok {
			for _, s := range a.services {
				if s.GetServiceUuid() == id {
					info, ok = s, true
				}
			}
		}
		if !ok {
			return nil, status.Errorf(codes.NotFound, "no service with identifier %q", id)
		}
		out[id] = info
	}
	return binding_constructors.NewGetServicesResponse(out), nil
}

// Transcript helpers: the real API container's order (warnings, info,
// interpretation, validation, execution per instruction, run finished).

// Interpreting returns the lines a run starts with.
func Interpreting() []*rpcLine {
	return []*rpcLine{
		binding_constructors.NewStarlarkRunResponseLineFromWarning("fake warning: image tag 'latest' is mutable"),
		binding_constructors.NewStarlarkRunResponseLineFromInfoMsg("fake api container"),
		binding_constructors.NewStarlarkRunResponseLineFromSinglelineProgressInfo("Interpreting plan - execution will begin shortly", 0, 0),
	}
}

// Instruction returns the lines of one executed instruction.
func Instruction(step, total uint32, name, desc, result string) []*rpcLine {
	in := binding_constructors.NewStarlarkInstruction(binding_constructors.NewStarlarkInstructionPosition("main.star", int32(step), 5), name, name+"(...)", nil, false, desc)
	return []*rpcLine{
		binding_constructors.NewStarlarkRunResponseLineFromSinglelineProgressInfo("Starting execution", step, total),
		binding_constructors.NewStarlarkRunResponseLineFromInstruction(in),
		binding_constructors.NewStarlarkRunResponseLineFromInstructionResult(result, time.Millisecond),
	}
}

// Success is the final line of a successful run returning output.
func Success(output string) *rpcLine {
	return binding_constructors.NewStarlarkRunResponseLineFromRunSuccessEvent(output, 3*time.Second)
}

// Failure is the final line of a failed run.
func Failure() *rpcLine { return binding_constructors.NewStarlarkRunResponseLineFromRunFailureEvent() }

// InterpretationError, ValidationError and ExecutionError are error lines.
func InterpretationError(msg string) *rpcLine {
	return binding_constructors.NewStarlarkRunResponseLineFromInterpretationError(binding_constructors.NewStarlarkInterpretationError(msg))
}

// ValidationError is a validation error line.
func ValidationError(msg string) *rpcLine {
	return binding_constructors.NewStarlarkRunResponseLineFromValidationError(binding_constructors.NewStarlarkValidationError(msg))
}

// ExecutionError is an execution error line.
func ExecutionError(msg string) *rpcLine {
	return binding_constructors.NewStarlarkRunResponseLineFromExecutionError(binding_constructors.NewStarlarkExecutionError(msg))
}

// Lines concatenates line groups.
func Lines(groups ...[]*rpcLine) []*rpcLine {
	var out []*rpcLine
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// SortedFiles lists a package's file names.
func SortedFiles(files map[string][]byte) []string {
	out := make([]string, 0, len(files))
	for f := range files {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}
