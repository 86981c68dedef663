package clientpatch

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/segdiff/segdiff/diffusion/role"
)

// ParticipantKey is the participant key (in participants[] and
// participants_matrix.cl[] entries) holding segdiff's per-participant
// settings, read by `segdiff devnet up` and the Kurtosis package and never
// passed to ethereum-package; RoleKey is its only key.
const (
	ParticipantKey = "segdiff"
	RoleKey        = "role"
)

// adversarialRoles names the roles a client entry may map to flags: every
// role but the relay, which is every client's default (package role).
func adversarialRoles() []string {
	var out []string
	for _, r := range role.Adversarial() {
		out = append(out, r.Name)
	}
	return out
}

// RoleNamesOf lists the roles c has flags for, sorted.
func (c *Client) RoleNamesOf() []string { return slices.Sorted(maps.Keys(c.Roles)) }

// lookupImage returns the entry whose image is image (an already resolved
// reference), nil if none.
func (m *Manifest) lookupImage(image string) *Client {
	for i := range m.Clients {
		if m.Clients[i].Image == image {
			return &m.Clients[i]
		}
	}
	return nil
}

// RoleClients describes the entries that map roles, for messages:
// "prysm-segmented (mute, silent, withholder)", or "none".
func (m *Manifest) RoleClients() string {
	var out []string
	for _, c := range m.Clients {
		if len(c.Roles) > 0 {
			out = append(out, fmt.Sprintf("%s (%s)", c.Name, strings.Join(c.RoleNamesOf(), ", ")))
		}
	}
	if len(out) == 0 {
		return "none"
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// participantRole reads a participant's segdiff.role: "" when the
// participant has no segdiff section or no role.
func participantRole(p map[string]any) (string, error) {
	raw, ok := p[ParticipantKey]
	if !ok || raw == nil {
		return "", nil
	}
	sec, ok := raw.(map[string]any)
	if !ok {
		return "", &keyErr{ParticipantKey, fmt.Errorf("want a mapping with key %s, got %T", RoleKey, raw)}
	}
	for _, k := range slices.Sorted(maps.Keys(sec)) {
		if k != RoleKey {
			return "", &keyErr{ParticipantKey + "." + k, fmt.Errorf("unknown key (allowed: %s)", RoleKey)}
		}
	}
	rv, ok := sec[RoleKey]
	if !ok || rv == nil {
		return "", nil
	}
	name, ok := rv.(string)
	if !ok {
		return "", &keyErr{ParticipantKey + "." + RoleKey, fmt.Errorf("want a role name, got %T", rv)}
	}
	if _, known := role.Lookup(name); !known {
		return "", &keyErr{ParticipantKey + "." + RoleKey, fmt.Errorf("unknown role %q (known: %s)", name, strings.Join(role.Names(), ", "))}
	}
	return name, nil
}

// HasRoles reports whether any participants[] or participants_matrix entry
// of the ethereum-package args has a segdiff section.
func HasRoles(args map[string]any) bool {
	var lists []any
	lists = append(lists, args["participants"])
	if matrix, ok := args["participants_matrix"].(map[string]any); ok {
		for _, l := range matrix {
			lists = append(lists, l)
		}
	}
	for _, l := range lists {
		items, _ := l.([]any)
		for _, item := range items {
			if p, ok := item.(map[string]any); ok {
				if _, has := p[ParticipantKey]; has {
					return true
				}
			}
		}
	}
	return false
}
