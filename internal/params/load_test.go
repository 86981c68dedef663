package params_test

import (
	"strings"
	"testing"

	"github.com/segdiff/segdiff/internal/params"
)

// loadBase is a valid file with the transaction load and a buildoor builder.
const loadBase = `participants:
  - cl_type: prysm
    el_type: geth
    count: 4
network_params:
  network: kurtosis
  gloas_fork_epoch: 0
additional_services:
  - buildoor
segdiff:
  load:
    payload_bytes: 1048576
`

func TestCheckLoad(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     string // substring of the single expected problem; "" for none
	}{
		{name: "valid", want: ""},
		{name: "every key", old: "    payload_bytes: 1048576", new: "    enabled: true\n    payload_bytes: 2097152\n    first_account: 15\n    accounts: 5\n    fork: amsterdam\n    image: segdiff/segdiff:dev"},
		{name: "unknown key", old: "    payload_bytes: 1048576", new: "    payload_byte: 1048576",
			want: "x.yaml:12: segdiff.load.payload_byte: unknown key (did you mean payload_bytes?)"},
		{name: "payload too large", old: "payload_bytes: 1048576", new: "payload_bytes: 9000000",
			want: "x.yaml:12: segdiff.load.payload_bytes: 9000000 outside [1024, 8388608] (EIP-7934 caps a block at 8 MiB)"},
		{name: "payload not a number", old: "payload_bytes: 1048576", new: "payload_bytes: 1MiB",
			want: "x.yaml:12: segdiff.load.payload_bytes: must be an integer, got \"1MiB\""},
		{name: "enabled not a bool", old: "    payload_bytes: 1048576", new: "    enabled: yes please",
			want: "x.yaml:12: segdiff.load.enabled: must be true or false"},
		{name: "beyond the prefunded accounts", old: "    payload_bytes: 1048576", new: "    first_account: 18\n    accounts: 4",
			want: "x.yaml:12: segdiff.load: uses accounts 18..21, but ethereum-package prefunds 0..20 only"},
		{name: "spamoor beside the default accounts", old: "  - buildoor", new: "  - buildoor\n  - spamoor\n",
			want: ""},
		{name: "bad fork", old: "    payload_bytes: 1048576", new: "    fork: cancun",
			want: "x.yaml:12: segdiff.load.fork: unknown fork \"cancun\"; use one of auto, prague, osaka, amsterdam"},
		{name: "above the gas limit", old: "  gloas_fork_epoch: 0", new: "  gloas_fork_epoch: 0\n  gas_limit: 30000000",
			want: "x.yaml:13: segdiff.load.payload_bytes: 1048576 bytes of calldata need up to 67297864 gas per block (64 gas per byte), above the block gas limit 30000000"},
		{name: "Osaka pricing without Gloas", old: "  gloas_fork_epoch: 0", new: "  genesis_gaslimit: 45000000",
			want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := loadBase
			if tt.old != "" {
				if !strings.Contains(src, tt.old) {
					t.Fatalf("test bug: %q not in the base", tt.old)
				}
				src = strings.Replace(src, tt.old, tt.new, 1)
			}
			wantOneProblem(t, src, tt.want)
		})
	}
}

// TestCheckLoadAccountClashes: the load's accounts must not be ones another
// service of the file signs with.
func TestCheckLoadAccountClashes(t *testing.T) {
	tests := []struct {
		name, services, buildoor, load, want string
	}{
		{"spamoor", "[spamoor]", "", "{first_account: 10, accounts: 6}", "uses prefunded account 13, which spamoor signs with"},
		{"tx_fuzz", "[tx_fuzz]", "", "{first_account: 0, accounts: 6}", "uses prefunded account 3, which tx_fuzz signs with"},
		{"default builder", "[buildoor]", "", "{first_account: 0, accounts: 2}", "uses prefunded account 0, which buildoor on participant 1 signs with"},
		{"builder instance", "[buildoor]", "buildoor_params: {instances: [{participant: 1}, {participant: 3}]}\n", "{first_account: 2}",
			"uses prefunded account 2, which buildoor on participant 3 signs with"},
		{"clear", "[buildoor, spamoor, tx_fuzz]", "", "{}", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "participants: [{cl_type: prysm, el_type: geth, count: 4}]\nnetwork_params: {network: kurtosis, gloas_fork_epoch: 0}\n" +
				"additional_services: " + tt.services + "\n" + tt.buildoor + "segdiff: {load: " + tt.load + "}\n"
			wantOneProblem(t, src, tt.want)
		})
	}
	if params.PrefundedAccounts != 21 || !strings.Contains(strings.Join(params.LoadKeys, ","), "payload_bytes") {
		t.Errorf("prefunded %d, keys %v", params.PrefundedAccounts, params.LoadKeys)
	}
}

// FuzzCheckLoad: any segdiff.load section yields problems, never a panic.
func FuzzCheckLoad(f *testing.F) {
	f.Add("{payload_bytes: 1048576}")
	f.Add("{first_account: -3, accounts: 99, fork: x, enabled: 2}")
	f.Add("[1, 2]")
	f.Fuzz(func(t *testing.T, section string) {
		src := loadBase[:strings.Index(loadBase, "segdiff:")] + "segdiff:\n  load: " + section + "\n"
		for _, p := range params.New().Check("f.yaml", []byte(src)) {
			if p.File != "f.yaml" || p.Line < 0 {
				t.Fatalf("malformed problem %+v", p)
			}
		}
	})
}

// wantOneProblem checks src has exactly one problem containing want, or
// none when want is "".
func wantOneProblem(t *testing.T, src, want string) {
	t.Helper()
	got := params.New().Check("x.yaml", []byte(src))
	switch {
	case want == "" && len(got) > 0:
		t.Errorf("unexpected problems:\n%s", join(got))
	case want != "" && (len(got) != 1 || !strings.Contains(got[0].String(), want)):
		t.Errorf("got %d problems, want 1 containing %q:\n%s", len(got), want, join(got))
	}
}
