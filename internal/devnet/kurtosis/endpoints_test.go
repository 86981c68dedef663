package kurtosis_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/devnet/kurtosis"
)

func sampleEndpoints(beaconURL string) *kurtosis.Endpoints {
	return &kurtosis.Endpoints{
		Version: kurtosis.EndpointsVersion, Enclave: "segdiff", EnclaveUUID: "abc", ParamsFile: "network-params/segmented.yaml",
		Mode: devnet.ModeSegmented, SecondsPerSlot: 12, SlotDurationMS: 12000, PayloadDueBPS: 5000,
		Nodes: []kurtosis.EndpointNode{
			{Node: devnet.Node{ID: "cl-1-prysm-geth", Roles: []devnet.Role{devnet.RoleNode, devnet.RoleBuilder}, LinkClass: devnet.LinkHome,
				MetricsURL: "http://127.0.0.1:1/metrics", BeaconURL: beaconURL, Client: "prysm"}, CLService: "cl-1-prysm-geth"},
			{Node: devnet.Node{ID: "cl-2-prysm-geth", Roles: []devnet.Role{devnet.RoleNode}, LinkClass: devnet.LinkDatacenter,
				MetricsURL: "http://127.0.0.1:2/metrics", BeaconURL: beaconURL, Client: "prysm"}, CLService: "cl-2-prysm-geth"},
		},
		PrometheusURL: "http://127.0.0.1:9090",
		WrittenAt:     time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC),
	}
}

func TestWriteReadEndpoints(t *testing.T) {
	dir := t.TempDir()
	path := kurtosis.EndpointsPath(filepath.Join(dir, ".devnet"), "segdiff")
	want := sampleEndpoints("http://127.0.0.1:3500")
	if err := kurtosis.WriteEndpoints(path, want); err != nil {
		t.Fatalf("WriteEndpoints: %v", err)
	}
	// Overwrite: still atomic, no temp files left behind.
	want.PrometheusURL = "http://127.0.0.1:9091"
	if err := kurtosis.WriteEndpoints(path, want); err != nil {
		t.Fatalf("WriteEndpoints again: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 || entries[0].Name() != "endpoints.json" {
		t.Errorf("directory holds %v, want only endpoints.json", entries)
	}
	got, err := kurtosis.ReadEndpoints(path)
	if err != nil {
		t.Fatalf("ReadEndpoints: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip =\n%+v\nwant\n%+v", got, want)
	}
	// The node fields are inline, under devnet.Node's JSON names.
	raw, _ := os.ReadFile(path)
	for _, key := range []string{`"metrics_url"`, `"beacon_url"`, `"link_class"`, `"roles"`, `"cl_service"`, `"prometheus_url"`} {
		if !strings.Contains(string(raw), key) {
			t.Errorf("endpoints file lacks %s:\n%s", key, raw)
		}
	}
	bad := sampleEndpoints("")
	bad.Nodes[0].MetricsURL = ""
	if err := kurtosis.WriteEndpoints(filepath.Join(dir, "bad.json"), bad); !errors.Is(err, kurtosis.ErrBadEndpoints) {
		t.Errorf("WriteEndpoints of an invalid value: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("invalid endpoints were written: %v", err)
	}
}

func TestParseEndpoints(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(m map[string]any)
		wantErr string
	}{
		{name: "valid"},
		{name: "unknown key", mutate: func(m map[string]any) { m["prometheus"] = "x" }, wantErr: `unknown field "prometheus"`},
		{name: "wrong version", mutate: func(m map[string]any) { m["version"] = 2 }, wantErr: "version: 2"},
		{name: "no enclave", mutate: func(m map[string]any) { m["enclave"] = "" }, wantErr: "enclave: empty"},
		{name: "bad mode", mutate: func(m map[string]any) { m["mode"] = "flood" }, wantErr: "mode:"},
		{name: "no nodes", mutate: func(m map[string]any) { m["nodes"] = []any{} }, wantErr: "nodes: empty"},
		{name: "unsorted nodes", mutate: func(m map[string]any) {
			n := m["nodes"].([]any)
			n[0], n[1] = n[1], n[0]
		}, wantErr: "not sorted"},
		{name: "no metrics url", mutate: func(m map[string]any) { m["nodes"].([]any)[1].(map[string]any)["metrics_url"] = "" }, wantErr: "nodes[1].metrics_url: empty"},
		{name: "relative beacon url", mutate: func(m map[string]any) { m["nodes"].([]any)[0].(map[string]any)["beacon_url"] = "127.0.0.1:3500" }, wantErr: "nodes[0].beacon_url"},
		{name: "no prometheus", mutate: func(m map[string]any) { m["prometheus_url"] = "" }, wantErr: "prometheus_url: empty"},
		{name: "bad grafana", mutate: func(m map[string]any) { m["grafana_url"] = "ftp://x" }, wantErr: "grafana_url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := json.Marshal(sampleEndpoints("http://127.0.0.1:3500"))
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			if tt.mutate != nil {
				tt.mutate(m)
			}
			b, _ = json.Marshal(m)
			_, err := kurtosis.ParseEndpoints(b)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ParseEndpoints: %v", err)
				}
				return
			}
			if !errors.Is(err, kurtosis.ErrBadEndpoints) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseEndpoints error = %v, want ErrBadEndpoints naming %q", err, tt.wantErr)
			}
		})
	}
}

func FuzzParseEndpoints(f *testing.F) {
	b, _ := json.Marshal(sampleEndpoints("http://127.0.0.1:3500"))
	f.Add(b)
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`{} {}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := kurtosis.ParseEndpoints(data)
		if err != nil {
			if !errors.Is(err, kurtosis.ErrBadEndpoints) {
				t.Fatalf("error does not wrap ErrBadEndpoints: %v", err)
			}
			return
		}
		// Whatever parses must survive re-encoding (what WriteEndpoints does).
		again, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("marshal parsed value: %v", err)
		}
		if _, err := kurtosis.ParseEndpoints(again); err != nil {
			t.Fatalf("re-encoded value does not parse: %v\n%s", err, again)
		}
	})
}
