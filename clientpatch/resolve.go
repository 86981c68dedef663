package clientpatch

import (
	"fmt"
	"strings"
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
// cl entry's vc_image fills an empty vc_image. It covers participants[] and
// the cl/el lists of participants_matrix. Args without participants are
// left alone. An unknown reference, a reference of the wrong layer or a
// malformed participant is an error naming the list, index and key; on error
// args may be partly rewritten. Resolving twice is a no-op the second time.
func ResolveParticipants(args map[string]any, m *Manifest) error {
	if m == nil {
		return fmt.Errorf("resolve participants: no client manifest")
	}
	if raw, ok := args["participants"]; ok && raw != nil {
		if err := resolveList("participants", raw, m); err != nil {
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
				if err := resolveList("participants_matrix."+key, list, m); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func resolveList(where string, raw any, m *Manifest) error {
	list, ok := raw.([]any)
	if !ok {
		return fmt.Errorf("resolve participants: %s: want a list, got %T", where, raw)
	}
	for i, item := range list {
		p, ok := item.(map[string]any)
		if !ok {
			return fmt.Errorf("resolve participants: %s[%d]: want a mapping, got %T", where, i, item)
		}
		if err := resolveParticipant(p, m); err != nil {
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

func resolveParticipant(p map[string]any, m *Manifest) error {
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
