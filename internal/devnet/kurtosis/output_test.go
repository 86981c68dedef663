package kurtosis_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/internal/devnet/kurtosis"
)

func TestParseRunOutput(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(map[string]any)
		raw     string
		wantErr string // substring; "" = success
	}{
		{name: "contract output"},
		{name: "grafana disabled", mutate: func(m map[string]any) { m["grafana_service"] = "" }},
		{name: "only seconds_per_slot", mutate: func(m map[string]any) { delete(m, "slot_duration_ms") }},
		{name: "empty", raw: " ", wantErr: "empty"},
		{name: "not json", raw: "struct(a=1)", wantErr: "invalid character"},
		{name: "no nodes", mutate: func(m map[string]any) { m["segdiff_nodes"] = []any{} }, wantErr: "segdiff_nodes: empty"},
		{name: "node without id", mutate: func(m map[string]any) { node(m, 1)["id"] = "" }, wantErr: "segdiff_nodes[1].id"},
		{name: "repeated id", mutate: func(m map[string]any) { node(m, 1)["id"] = "cl-2-prysm-geth" }, wantErr: "repeated"},
		{name: "no cl service", mutate: func(m map[string]any) { node(m, 0)["cl_service"] = "" }, wantErr: "segdiff_nodes[0].cl_service"},
		{name: "unknown role", mutate: func(m map[string]any) { node(m, 1)["roles"] = []any{"node", "relay"} }, wantErr: `roles[1]: unknown role "relay"`},
		{name: "no roles", mutate: func(m map[string]any) { node(m, 0)["roles"] = []any{} }, wantErr: "roles: empty"},
		{name: "diffusion roles", mutate: func(m map[string]any) {
			node(m, 0)["diffusion_role"] = "withholder"
			node(m, 1)["diffusion_role"] = "relay"
		}},
		{name: "unknown diffusion role", mutate: func(m map[string]any) { node(m, 1)["diffusion_role"] = "byzantine" },
			wantErr: `segdiff_nodes[1].diffusion_role: unknown role "byzantine" (want one of relay, withholder, silent, mute, unacking-withholder, under-reporter, padding-under-reporter)`},
		{name: "unknown link class", mutate: func(m map[string]any) { node(m, 0)["link_class"] = "fibre" }, wantErr: "link_class"},
		{name: "no prometheus", mutate: func(m map[string]any) { m["prometheus_service"] = "" }, wantErr: "prometheus_service"},
		{name: "unknown mode", mutate: func(m map[string]any) { m["mode"] = "gossip" }, wantErr: "mode:"},
		{name: "zero slot", mutate: func(m map[string]any) { m["seconds_per_slot"] = 0; delete(m, "slot_duration_ms") }, wantErr: "seconds_per_slot"},
		{name: "bps too large", mutate: func(m map[string]any) { m["payload_due_bps"] = 10001 }, wantErr: "payload_due_bps"},
		{name: "wrong type", mutate: func(m map[string]any) { m["seconds_per_slot"] = "12" }, wantErr: "seconds_per_slot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := tt.raw
			if raw == "" {
				raw = runOutput(t, tt.mutate)
			}
			out, err := kurtosis.ParseRunOutput([]byte(raw))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ParseRunOutput: %v", err)
				}
				if len(out.Nodes) != 2 || out.Mode != "segmented" || out.PrometheusService != "segdiff-prometheus" {
					t.Errorf("ParseRunOutput = %+v", out)
				}
				return
			}
			if !errors.Is(err, kurtosis.ErrBadOutput) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseRunOutput error = %v, want ErrBadOutput naming %q", err, tt.wantErr)
			}
		})
	}
}

func node(m map[string]any, i int) map[string]any {
	return m["segdiff_nodes"].([]any)[i].(map[string]any)
}

func FuzzParseRunOutput(f *testing.F) {
	f.Add([]byte(`{"segdiff_nodes":[{"id":"a","cl_service":"a","roles":["node"],"link_class":"home"}],"prometheus_service":"p","mode":"whole","seconds_per_slot":12}`))
	f.Add([]byte(`{"segdiff_nodes":[],"mode":"segmented"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := kurtosis.ParseRunOutput(data)
		if err != nil {
			if !errors.Is(err, kurtosis.ErrBadOutput) {
				t.Fatalf("error does not wrap ErrBadOutput: %v", err)
			}
			return
		}
		if len(out.Nodes) == 0 || out.PrometheusService == "" {
			t.Fatalf("accepted output breaks the contract: %+v", out)
		}
	})
}
