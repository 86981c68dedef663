package kurtosis

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/segdiff/segdiff/diffusion/role"

	"github.com/segdiff/segdiff/internal/devnet"
)

// ParseRunOutput decodes and checks the package's serialized output. Errors
// wrap ErrBadOutput and name the offending field.
func ParseRunOutput(data []byte) (*RunOutput, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("parse run output: %w: empty (did main.star return a value?)", ErrBadOutput)
	}
	var out RunOutput
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("parse run output: %w: %w", ErrBadOutput, err)
	}
	if err := out.check(); err != nil {
		return nil, fmt.Errorf("parse run output: %w: %w", ErrBadOutput, err)
	}
	return &out, nil
}

func (o *RunOutput) check() error {
	if len(o.Nodes) == 0 {
		return fmt.Errorf("segdiff_nodes: empty")
	}
	seen := map[string]bool{}
	for i, n := range o.Nodes {
		switch {
		case n.ID == "":
			return fmt.Errorf("segdiff_nodes[%d].id: empty", i)
		case seen[n.ID]:
			return fmt.Errorf("segdiff_nodes[%d].id: %q repeated", i, n.ID)
		case n.CLService == "":
			return fmt.Errorf("segdiff_nodes[%d].cl_service: empty", i)
		case len(n.Roles) == 0:
			return fmt.Errorf("segdiff_nodes[%d].roles: empty", i)
		}
		seen[n.ID] = true
		for j, r := range n.Roles {
			switch devnet.Role(r) {
			case devnet.RoleNode, devnet.RoleProposer, devnet.RoleBuilder:
			default:
				return fmt.Errorf("segdiff_nodes[%d].roles[%d]: unknown role %q (want node, proposer or builder)", i, j, r)
			}
		}
		if _, known := role.Lookup(n.DiffusionRole); n.DiffusionRole != "" && !known {
			return fmt.Errorf("segdiff_nodes[%d].diffusion_role: unknown role %q (want one of %s)", i, n.DiffusionRole, strings.Join(role.Names(), ", "))
		}
		switch devnet.LinkClass(n.LinkClass) {
		case devnet.LinkHome, devnet.LinkDatacenter, devnet.LinkCustom:
		default:
			return fmt.Errorf("segdiff_nodes[%d].link_class: unknown class %q (want home, datacenter or custom)", i, n.LinkClass)
		}
	}
	if o.PrometheusService == "" {
		return fmt.Errorf("prometheus_service: empty")
	}
	if _, err := devnet.ParseMode(o.Mode); err != nil {
		return fmt.Errorf("mode: %w", err)
	}
	if o.SecondsPerSlot <= 0 && o.SlotDurationMS <= 0 {
		return fmt.Errorf("seconds_per_slot: %d, want > 0", o.SecondsPerSlot)
	}
	if o.SlotDurationMS < 0 {
		return fmt.Errorf("slot_duration_ms: %d, want >= 0", o.SlotDurationMS)
	}
	if o.PayloadDueBPS < 0 || o.PayloadDueBPS > 10000 {
		return fmt.Errorf("payload_due_bps: %d, want 0..10000", o.PayloadDueBPS)
	}
	return nil
}
