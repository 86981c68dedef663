package clientpatch

import (
	"fmt"
	"strings"

	rolepkg "github.com/segdiff/segdiff/diffusion/role"
)

// ImageRefPrefix starts an image reference to a manifest entry: a
// participant's cl_image / el_image of "@clients/prysm-segmented" names the
// entry "prysm-segmented".
const ImageRefPrefix = "@clients/"

// IsImageRef reports whether s is an "@clients/<name>" reference.
func IsImageRef(s string) bool { return strings.HasPrefix(s, ImageRefPrefix) }

// ResolveImage returns the image ref stands for: the entry's tag for an
// "@clients/<name>" reference, ref itself for anything else. An unknown
// name is an error listing the known ones.
func (m *Manifest) ResolveImage(ref string) (string, error) {
	c, err := m.resolveRef(ref)
	if err != nil || c == nil {
		return ref, err
	}
	return c.Image, nil
}

// resolveRef returns the entry ref names, nil for a plain image.
func (m *Manifest) resolveRef(ref string) (*Client, error) {
	if !IsImageRef(ref) {
		return nil, nil
	}
	name := strings.TrimPrefix(ref, ImageRefPrefix)
	c, ok := m.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("unknown client %q in %s (known: %s)", name, m.Path, strings.Join(m.Names(), ", "))
	}
	return c, nil
}

// imageKeys are the participant keys that may hold a reference, with the
// layer the entry must have and the key its parameters are appended to.
var imageKeys = []struct{ image, layer, params string }{
	{"cl_image", LayerCL, "cl_extra_params"},
	{"el_image", LayerEL, "el_extra_params"},
}

// ResolveParticipants rewrites, in place, every participant of the
// ethereum-package args whose cl_image or el_image is an "@clients/<name>"
// reference: the image becomes the entry's tag, the entry's
// cl_extra_params / el_extra_params are appended to the participant's, and a
// cl entry's vc_image fills an empty vc_image. A participant whose
// segdiff.role is not relay also gets the flags its CL entry maps that role
// to (Client.Roles) appended to its cl_extra_params; its segdiff section is
// kept (the Kurtosis package reads the role, and removes the section before
// ethereum-package sees it). It covers participants[] and the cl/el lists of
// participants_matrix (a role belongs on participants[] or
// participants_matrix.cl[]). Args without participants are left alone. An
// unknown reference, a reference of the wrong layer, a role the
// participant's CL image has no flag for, an unknown role or a malformed
// participant is an error naming the list, index and key; on error args may
// be partly rewritten. Resolving twice is a no-op the second time.
func ResolveParticipants(args map[string]any, m *Manifest) error {
	if m == nil {
		return fmt.Errorf("resolve participants: no client manifest")
	}
	if raw, ok := args["participants"]; ok && raw != nil {
		if err := resolveList("participants", raw, m, true); err != nil {
			return err
		}
	}
	if raw, ok := args["participants_matrix"]; ok && raw != nil {
		matrix, ok := raw.(map[string]any)
		if !ok {
			return fmt.Errorf("resolve participants: participants_matrix: want a mapping, got %T", raw)
		}
		for _, key := range []string{"cl", "el"} {
			if list, ok := matrix[key]; ok && list != nil {
				if err := resolveList("participants_matrix."+key, list, m, key == "cl"); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// resolveList resolves one list of participants; roles tells whether its
// entries may carry a segdiff.role (the beacon node's entries).
func resolveList(where string, raw any, m *Manifest, roles bool) error {
	list, ok := raw.([]any)
	if !ok {
		return fmt.Errorf("resolve participants: %s: want a list, got %T", where, raw)
	}
	for i, item := range list {
		p, ok := item.(map[string]any)
		if !ok {
			return fmt.Errorf("resolve participants: %s[%d]: want a mapping, got %T", where, i, item)
		}
		if err := resolveParticipant(p, m, roles); err != nil {
			return fmt.Errorf("resolve participants: %s[%d].%w", where, i, err)
		}
	}
	return nil
}

// keyErr prefixes an error with the participant key it concerns; the caller
// adds the list and index.
type keyErr struct {
	key string
	err error
}

func (e *keyErr) Error() string { return e.key + ": " + e.err.Error() }
func (e *keyErr) Unwrap() error { return e.err }

func resolveParticipant(p map[string]any, m *Manifest, roles bool) error {
	if _, has := p[ParticipantKey]; has && !roles {
		return &keyErr{ParticipantKey, fmt.Errorf("a role belongs on the beacon node's entry: participants[] or participants_matrix.cl[]")}
	}
	role, err := participantRole(p)
	if err != nil {
		return err
	}
	for _, k := range imageKeys {
		raw, ok := p[k.image]
		if !ok || raw == nil {
			continue
		}
		ref, ok := raw.(string)
		if !ok {
			return &keyErr{k.image, fmt.Errorf("want a string, got %T", raw)}
		}
		c, err := m.resolveRef(ref)
		if err != nil {
			return &keyErr{k.image, err}
		}
		if c == nil {
			continue
		}
		if c.Layer != k.layer {
			return &keyErr{k.image, fmt.Errorf("client %q is a %s image, not %s", c.Name, c.Layer, k.layer)}
		}
		params := c.CLExtraParams
		if k.layer == LayerEL {
			params = c.ELExtraParams
		}
		merged, err := appendParams(p[k.params], params)
		if err != nil {
			return &keyErr{k.params, err}
		}
		p[k.image] = c.Image
		if len(merged) > 0 {
			p[k.params] = merged
		}
		if c.VCImage != "" {
			if vc, _ := p["vc_image"].(string); vc == "" {
				p["vc_image"] = c.VCImage
			}
		}
	}
	if role == "" || role == rolepkg.Relay.Name {
		return nil
	}
	return resolveRole(p, m, role)
}

// resolveRole appends the flags that make the participant's CL image play
// role. The image is already resolved, so the entry is found by its tag
// (which also finds it on a second resolve, where the flags are present).
func resolveRole(p map[string]any, m *Manifest, role string) error {
	key := ParticipantKey + "." + RoleKey
	image, _ := p["cl_image"].(string)
	c := m.lookupImage(image)
	switch {
	case image == "":
		return &keyErr{key, fmt.Errorf("%s needs a flag from a client image in %s, but cl_image is not set (ethereum-package's default image has none); clients with role flags: %s",
			role, m.Path, m.RoleClients())}
	case c == nil:
		return &keyErr{key, fmt.Errorf("%s needs a flag from a client image in %s, but cl_image %s is none of its entries; clients with role flags: %s",
			role, m.Path, image, m.RoleClients())}
	case c.Layer != LayerCL:
		return &keyErr{key, fmt.Errorf("%s needs a beacon-node image, but cl_image is client %q, a %s image", role, c.Name, c.Layer)}
	}
	flags, ok := c.Roles[role]
	if !ok {
		has := strings.Join(c.RoleNamesOf(), ", ")
		if has == "" {
			has = "none"
		}
		return &keyErr{key, fmt.Errorf("client %q has no flag for role %s in %s (its roles: %s); clients with role flags: %s",
			c.Name, role, m.Path, has, m.RoleClients())}
	}
	merged, err := appendParams(p["cl_extra_params"], flags)
	if err != nil {
		return &keyErr{"cl_extra_params", err}
	}
	p["cl_extra_params"] = merged
	return nil
}

// appendParams appends add to the participant's existing parameter list,
// skipping parameters already present so a flag is not passed twice.
func appendParams(existing any, add []string) ([]any, error) {
	var out []any
	switch v := existing.(type) {
	case nil:
	case []any:
		out = append(out, v...)
	case []string:
		for _, s := range v {
			out = append(out, s)
		}
	default:
		return nil, fmt.Errorf("want a list, got %T", existing)
	}
	have := map[string]bool{}
	for _, x := range out {
		if s, ok := x.(string); ok {
			have[s] = true
		}
	}
	for _, s := range add {
		if !have[s] {
			out = append(out, s)
			have[s] = true
		}
	}
	return out, nil
}
