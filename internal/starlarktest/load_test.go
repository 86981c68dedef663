package starlarktest_test

import (
	"slices"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/segdiff/segdiff/internal/starlarktest"
)

// loaded is the segmented scenario with the transaction load switched on.
const loaded = segmented + "  load: {}\n"

// TestLoadStartsAfterChainUp: segdiff.load adds segdiff-load after
// ethereum-package's run, waits for the first EL's first block, sends through
// every EL, and reports the service in the run output.
func TestLoadStartsAfterChainUp(t *testing.T) {
	p, out := mustRun(t, loaded, "docker")
	svc := p.Services["segdiff-load"]
	if svc == nil {
		t.Fatalf("no segdiff-load service; services: %v", p.ServiceNames())
	}
	if out.LoadService != "segdiff-load" {
		t.Errorf("load_service = %q, want segdiff-load", out.LoadService)
	}
	if svc.Image != "segdiff/segdiff:latest" {
		t.Errorf("image = %q, want segdiff/segdiff:latest", svc.Image)
	}
	var urls []string
	for i := 1; i <= 6; i++ {
		urls = append(urls, "http://el-"+string(rune('0'+i))+"-geth-prysm:8545")
	}
	want := []string{"load", "--rpc", strings.Join(urls, ","), "--payload-bytes", "1048576", "--first-account", "14",
		"--accounts", "6", "--fork", "auto", "--genesis-time", "{{kurtosis:genesis.timestamp}}", "--slot-duration", "12000ms"}
	if !slices.Equal(svc.Cmd, want) {
		t.Errorf("cmd =\n  %q\nwant\n  %q", svc.Cmd, want)
	}
	// Order: ethereum-package's services, then the wait for a block on the
	// first EL, then the load.
	wait, add := -1, -1
	for i, in := range p.Instructions {
		switch {
		case in.Name == "wait":
			name, _ := starlark.AsString(in.Args["service_name"])
			field, _ := starlark.AsString(in.Args["field"])
			if name == "el-1-geth-prysm" && field == "extract.number" {
				wait = i
			}
		case in.Name == "add_service" && argString(in, "name") == "segdiff-load":
			add = i
		}
	}
	if wait < 0 || add < 0 || wait > add {
		t.Errorf("wait for el-1-geth-prysm's first block at instruction %d, add segdiff-load at %d; want the wait first", wait, add)
	}
}

func TestLoadOptions(t *testing.T) {
	tests := []struct {
		name, load string
		want       []string // flag, value pairs that must be in the command
		none       bool
	}{
		{"disabled", "{enabled: false}", nil, true},
		{"settings", "{payload_bytes: 524288, first_account: 15, accounts: 4, fork: amsterdam, image: example/segdiff:dev}",
			[]string{"--payload-bytes", "524288", "--first-account", "15", "--accounts", "4", "--fork", "amsterdam"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, out := mustRun(t, segmented+"  load: "+tt.load+"\n", "docker")
			svc := p.Services["segdiff-load"]
			if tt.none {
				if svc != nil || out.LoadService != "" {
					t.Fatalf("load started although disabled: %v, %q", svc, out.LoadService)
				}
				return
			}
			for i := 0; i < len(tt.want); i += 2 {
				j := slices.Index(svc.Cmd, tt.want[i])
				if j < 0 || svc.Cmd[j+1] != tt.want[i+1] {
					t.Errorf("cmd %q lacks %s %s", svc.Cmd, tt.want[i], tt.want[i+1])
				}
			}
			if tt.name == "settings" && svc.Image != "example/segdiff:dev" {
				t.Errorf("image = %q", svc.Image)
			}
		})
	}
	// A custom mnemonic reaches the load (ethereum-package prefunds its accounts).
	custom := strings.Replace(loaded, "  gloas_fork_epoch: 0\n", "  gloas_fork_epoch: 0\n  preregistered_validator_keys_mnemonic: \"abandon abandon art\"\n", 1)
	p, _ := mustRun(t, custom, "docker")
	if cmd := p.Services["segdiff-load"].Cmd; !slices.Contains(cmd, "abandon abandon art") {
		t.Errorf("cmd %q lacks the custom mnemonic", cmd)
	}
}

func TestLoadBadInputFails(t *testing.T) {
	tests := []struct {
		name, args, want string
	}{
		{"unknown key", segmented + "  load: {payload: 5}\n", "Invalid parameter segdiff.load.payload"},
		{"payload too large", segmented + "  load: {payload_bytes: 9000000}\n", "segdiff.load.payload_bytes must be an integer in [1024, 8388608]"},
		{"beyond the prefunded accounts", segmented + "  load: {first_account: 18, accounts: 4}\n", "uses accounts 18..21, but ethereum-package prefunds 0..20 only"},
		{"bad fork", segmented + "  load: {fork: cancun}\n", "segdiff.load.fork is cancun"},
		{"enabled not a bool", segmented + "  load: {enabled: yes please}\n", "segdiff.load.enabled must be true or false"},
		{"spamoor's account", strings.Replace(segmented, "[buildoor]", "[buildoor, spamoor]", 1) + "  load: {first_account: 13}\n",
			"segdiff.load uses prefunded account 13, which spamoor signs with"},
		{"a builder's account", strings.Replace(segmented, "instances: [{participant: 1}]", "instances: [{participant: 1}, {participant: 6}]", 1) +
			"  load: {first_account: 5, accounts: 2}\n", "prefunded account 5, which buildoor on participant 6 signs with"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := run(t, tt.args, "docker")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func argString(in starlarktest.Instruction, key string) string {
	s, _ := starlark.AsString(in.Args[key])
	return s
}
