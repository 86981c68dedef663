package clientpatch_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/internal/clientpatch"
)

func TestResolveImage(t *testing.T) {
	m, err := clientpatch.LoadFile("testdata/good/clients.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, ref, want, wantErr string
	}{
		{"reference", "@clients/demo-segmented", "segdiff/prysm-beacon-chain:demo", ""},
		{"plain image", "sigp/lighthouse:latest", "sigp/lighthouse:latest", ""},
		{"unknown", "@clients/nope", "", `unknown client "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := m.ResolveImage(tt.ref)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestResolveParticipants(t *testing.T) {
	m, err := clientpatch.LoadFile("testdata/good/clients.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    map[string]any
		want    map[string]any
		wantErr string
	}{
		{
			name: "cl and el references",
			args: map[string]any{"participants": []any{
				map[string]any{"cl_type": "prysm", "cl_image": "@clients/demo-segmented", "cl_extra_params": []any{"--verbosity=debug"},
					"el_type": "geth", "el_image": "@clients/geth-gloas"},
				map[string]any{"cl_type": "lighthouse", "cl_image": "sigp/lighthouse:latest"},
			}},
			want: map[string]any{"participants": []any{
				map[string]any{"cl_type": "prysm", "cl_image": "segdiff/prysm-beacon-chain:demo",
					"cl_extra_params": []any{"--verbosity=debug", "--enable-segmented-payload-gossip"},
					"vc_image":        "ethpandaops/prysm-validator:glamsterdam-devnet-7",
					"el_type":         "geth", "el_image": "ethpandaops/geth:glamsterdam-devnet-7", "el_extra_params": []any{"--verbosity=3"}},
				map[string]any{"cl_type": "lighthouse", "cl_image": "sigp/lighthouse:latest"},
			}},
		},
		{
			name: "explicit vc_image kept, flag not doubled",
			args: map[string]any{"participants": []any{map[string]any{"cl_image": "@clients/demo-segmented", "vc_image": "mine:1",
				"cl_extra_params": []string{"--enable-segmented-payload-gossip"}}}},
			want: map[string]any{"participants": []any{map[string]any{"cl_image": "segdiff/prysm-beacon-chain:demo", "vc_image": "mine:1",
				"cl_extra_params": []any{"--enable-segmented-payload-gossip"}}}},
		},
		{
			name: "participants_matrix",
			args: map[string]any{"participants_matrix": map[string]any{"el": []any{map[string]any{"el_image": "@clients/geth-gloas"}}}},
			want: map[string]any{"participants_matrix": map[string]any{"el": []any{map[string]any{"el_image": "ethpandaops/geth:glamsterdam-devnet-7", "el_extra_params": []any{"--verbosity=3"}}}}},
		},
		{name: "no participants", args: map[string]any{"network_params": map[string]any{}}, want: map[string]any{"network_params": map[string]any{}}},
		{
			name: "role flags appended to that participant only, segdiff section kept",
			args: map[string]any{"participants": []any{
				map[string]any{"cl_image": "@clients/demo-segmented", "count": 2},
				map[string]any{"cl_image": "@clients/demo-segmented", "count": 3, "segdiff": map[string]any{"role": "withholder"},
					"cl_extra_params": []any{"--verbosity=debug"}},
				map[string]any{"cl_image": "@clients/demo-segmented", "segdiff": map[string]any{"role": "relay"}},
				map[string]any{"cl_type": "lighthouse", "segdiff": map[string]any{"role": "relay"}},
			}},
			want: map[string]any{"participants": []any{
				map[string]any{"cl_image": "segdiff/prysm-beacon-chain:demo", "count": 2,
					"cl_extra_params": []any{"--enable-segmented-payload-gossip"}, "vc_image": "ethpandaops/prysm-validator:glamsterdam-devnet-7"},
				map[string]any{"cl_image": "segdiff/prysm-beacon-chain:demo", "count": 3, "segdiff": map[string]any{"role": "withholder"},
					"cl_extra_params": []any{"--verbosity=debug", "--enable-segmented-payload-gossip", "--segdiff-dev-role=withholder"},
					"vc_image":        "ethpandaops/prysm-validator:glamsterdam-devnet-7"},
				map[string]any{"cl_image": "segdiff/prysm-beacon-chain:demo", "segdiff": map[string]any{"role": "relay"},
					"cl_extra_params": []any{"--enable-segmented-payload-gossip"}, "vc_image": "ethpandaops/prysm-validator:glamsterdam-devnet-7"},
				map[string]any{"cl_type": "lighthouse", "segdiff": map[string]any{"role": "relay"}},
			}},
		},
		{
			name: "role on a participants_matrix cl entry",
			args: map[string]any{"participants_matrix": map[string]any{
				"el": []any{map[string]any{"el_type": "geth"}},
				"cl": []any{map[string]any{"cl_image": "@clients/demo-segmented", "segdiff": map[string]any{"role": "silent"}}},
			}},
			want: map[string]any{"participants_matrix": map[string]any{
				"el": []any{map[string]any{"el_type": "geth"}},
				"cl": []any{map[string]any{"cl_image": "segdiff/prysm-beacon-chain:demo", "segdiff": map[string]any{"role": "silent"},
					"cl_extra_params": []any{"--enable-segmented-payload-gossip", "--segdiff-dev-role=silent"},
					"vc_image":        "ethpandaops/prysm-validator:glamsterdam-devnet-7"}},
			}},
		},
		{
			name:    "role the client has no flag for",
			args:    map[string]any{"participants": []any{map[string]any{}, map[string]any{"cl_image": "@clients/demo-segmented", "segdiff": map[string]any{"role": "mute"}}}},
			wantErr: `participants[1].segdiff.role: client "demo-segmented" has no flag for role mute in testdata/good/clients.yaml (its roles: silent, withholder); clients with role flags: demo-segmented (silent, withholder)`,
		},
		{
			name:    "role on a stock image",
			args:    map[string]any{"participants": []any{map[string]any{"cl_image": "sigp/lighthouse:latest", "segdiff": map[string]any{"role": "withholder"}}}},
			wantErr: "participants[0].segdiff.role: withholder needs a flag from a client image in testdata/good/clients.yaml, but cl_image sigp/lighthouse:latest is none of its entries",
		},
		{
			name:    "role without a cl image",
			args:    map[string]any{"participants": []any{map[string]any{"segdiff": map[string]any{"role": "silent"}}}},
			wantErr: "participants[0].segdiff.role: silent needs a flag from a client image in testdata/good/clients.yaml, but cl_image is not set",
		},
		{
			name:    "unknown role",
			args:    map[string]any{"participants": []any{map[string]any{"cl_image": "@clients/demo-segmented", "segdiff": map[string]any{"role": "byzantine"}}}},
			wantErr: `participants[0].segdiff.role: unknown role "byzantine" (known: relay, withholder, silent, mute, unacking-withholder, under-reporter, padding-under-reporter)`,
		},
		{
			name:    "unknown segdiff key",
			args:    map[string]any{"participants": []any{map[string]any{"segdiff": map[string]any{"rol": "mute"}}}},
			wantErr: "participants[0].segdiff.rol: unknown key (allowed: role)",
		},
		{
			name:    "role on an el matrix entry",
			args:    map[string]any{"participants_matrix": map[string]any{"el": []any{map[string]any{"segdiff": map[string]any{"role": "mute"}}}}},
			wantErr: "participants_matrix.el[0].segdiff: a role belongs on the beacon node's entry",
		},
		{
			name:    "unknown reference",
			args:    map[string]any{"participants": []any{map[string]any{}, map[string]any{"el_image": "@clients/nope"}}},
			wantErr: `participants[1].el_image: unknown client "nope"`,
		},
		{
			name:    "wrong layer",
			args:    map[string]any{"participants": []any{map[string]any{"el_image": "@clients/demo-segmented"}}},
			wantErr: `participants[0].el_image: client "demo-segmented" is a cl image, not el`,
		},
		{
			name:    "params not a list",
			args:    map[string]any{"participants": []any{map[string]any{"cl_image": "@clients/demo-segmented", "cl_extra_params": "--x"}}},
			wantErr: "participants[0].cl_extra_params: want a list, got string",
		},
		{
			name:    "participant not a mapping",
			args:    map[string]any{"participants": []any{"prysm"}},
			wantErr: "participants[0]: want a mapping, got string",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := clientpatch.ResolveParticipants(tt.args, m)
			if errorCase(t, err, tt.wantErr) {
				return
			}
			if !reflect.DeepEqual(tt.args, tt.want) {
				t.Fatalf("got  %#v\nwant %#v", tt.args, tt.want)
			}
			// Resolving again changes nothing.
			if err := clientpatch.ResolveParticipants(tt.args, m); err != nil || !reflect.DeepEqual(tt.args, tt.want) {
				t.Fatalf("second resolve changed args or failed: %v", err)
			}
		})
	}
}

func TestHasRoles(t *testing.T) {
	for _, tc := range []struct {
		args map[string]any
		want bool
	}{
		{map[string]any{}, false},
		{map[string]any{"participants": []any{map[string]any{"cl_type": "prysm"}}}, false},
		{map[string]any{"participants": []any{map[string]any{"segdiff": map[string]any{"role": "mute"}}}}, true},
		{map[string]any{"participants_matrix": map[string]any{"cl": []any{map[string]any{"segdiff": nil}}}}, true},
	} {
		if got := clientpatch.HasRoles(tc.args); got != tc.want {
			t.Errorf("HasRoles(%v) = %v, want %v", tc.args, got, tc.want)
		}
	}
}
