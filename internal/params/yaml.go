package params

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/segdiff/segdiff/internal/suggest"
)

// YAML helpers: reading yaml.v3 nodes without reporting anything. The key
// walk and the rules report through run.add with the node's line.

// pair is one key/value of a mapping node.
type pair struct {
	key   string
	kn, v *yaml.Node
}

// pairsOf returns the entries of a mapping node, or false when n is not one.
func pairsOf(n *yaml.Node) ([]pair, bool) {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		return nil, false
	}
	out := make([]pair, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, pair{key: n.Content[i].Value, kn: n.Content[i], v: n.Content[i+1]})
	}
	return out, true
}

// valueOf returns the value of key in a mapping node, or nil.
func valueOf(n *yaml.Node, key string) *yaml.Node {
	ps, _ := pairsOf(n)
	for _, p := range ps {
		if p.key == key {
			return p.v
		}
	}
	return nil
}

// intOf reads an integer scalar (YAML !!int, with _ separators).
func intOf(n *yaml.Node) (int64, bool) {
	text, ok := intText(n)
	v, err := strconv.ParseInt(text, 0, 64)
	return v, ok && err == nil
}

// uintOf reads an unsigned 64-bit integer scalar (epochs reach 2^64-1).
func uintOf(n *yaml.Node) (uint64, bool) {
	text, ok := intText(n)
	v, err := strconv.ParseUint(text, 0, 64)
	return v, ok && err == nil
}

// intText is an !!int scalar's digits without _ separators.
func intText(n *yaml.Node) (string, bool) {
	n = deref(n)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		return "", false
	}
	return strings.ReplaceAll(n.Value, "_", ""), true
}

func isBool(n *yaml.Node) bool {
	n = deref(n)
	return n.Kind == yaml.ScalarNode && n.Tag == "!!bool"
}

func isTrue(n *yaml.Node) bool { return n != nil && isBool(n) && deref(n).Value == "true" }

// truthy is Starlark's truth of the value the package gets: false for
// null, false, 0, "" and empty lists and maps.
func truthy(n *yaml.Node) bool {
	if n == nil {
		return false
	}
	n = deref(n)
	switch {
	case n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode:
		return len(n.Content) > 0
	case n.Tag == "!!null":
		return false
	case n.Tag == "!!bool":
		return n.Value == "true"
	case n.Tag == "!!int" || n.Tag == "!!float":
		v, ok := floatOf(n)
		return !ok || v != 0
	}
	return n.Value != ""
}

func isString(n *yaml.Node) bool {
	n = deref(n)
	return n.Kind == yaml.ScalarNode && n.Tag == "!!str"
}

// deref follows aliases; a nil node (an absent key) reads as an empty one.
func deref(n *yaml.Node) *yaml.Node {
	if n == nil {
		return &yaml.Node{}
	}
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	n = deref(n)
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// kindName describes a node for messages: "a map", "a list", or the quoted
// scalar.
func kindName(n *yaml.Node) string {
	switch deref(n).Kind {
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", deref(n).Value)
	}
	return "an alias"
}

// typeName is what a YAML value becomes in Starlark, for messages that
// mirror the real code's ("got string, want iterable").
func typeName(n *yaml.Node) string {
	n = deref(n)
	switch {
	case n.Kind == yaml.MappingNode:
		return "dict"
	case n.Kind == yaml.SequenceNode:
		return "list"
	case n.Tag == "!!int":
		return "int"
	case n.Tag == "!!float":
		return "float"
	case n.Tag == "!!bool":
		return "bool"
	case n.Tag == "!!null":
		return "NoneType"
	}
	return "string"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// yamlErrorLine extracts the line from a yaml.v3 error ("yaml: line N: ...").
func yamlErrorLine(err error) int {
	msg := err.Error()
	if _, rest, ok := strings.Cut(msg, "line "); ok {
		end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if end > 0 {
			if n, err := strconv.Atoi(rest[:end]); err == nil {
				return n
			}
		}
	}
	return 1
}

// didYouMean returns " (did you mean X?)" for the candidate package
// suggest finds closest to got (transpositions such as cl_tpye/cl_type
// count as one edit), or "".
func didYouMean(got string, candidates []string) string {
	best, ok := suggest.Nearest(got, candidates)
	if !ok {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}
