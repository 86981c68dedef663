// Package params checks network-params files — the args of the segdiff
// Kurtosis package — against the pinned ethereum-package, reporting every
// problem with file, line, key path and the rule that found it.
//
// The check has two parts, as ethereum-package separates its sanity check
// from its parser: a generic walk of the keys against the tables of keys.go
// (walk.go; unknown keys and wrong shapes, rule "keys"), then the named rules
// of the Rules table (rules*.go), each one of the package's own checks or a
// trap that fails later in its launchers, with the real code's message.
// yaml.go holds the node helpers.
package params

import (
	"fmt"
	"os"
	"sort"

	"gopkg.in/yaml.v3"

	"github.com/segdiff/segdiff/internal/clientpatch"
)

// Problem is one finding in a network-params file.
type Problem struct {
	File string
	Line int
	Path string // key path, e.g. participants[0].cl_type
	Msg  string
	// Rule names the check that found it: RuleKeys for the key walk, else
	// an entry of Rules.
	Rule string
}

// String formats the problem as "file:line: path: msg [rule]".
func (p Problem) String() string {
	s := fmt.Sprintf("%s:%d: %s: %s", p.File, p.Line, p.Path, p.Msg)
	if p.Rule != "" {
		s += " [" + p.Rule + "]"
	}
	return s
}

// Checker checks network-params files. The zero value is not usable; build
// one with New. A Checker is safe for concurrent use once built.
type Checker struct {
	clients       map[string]ClientType // nil: no manifest loaded
	clientsSource string
}

// ClientType is what the checker needs of a client-patches entry: its layer
// ("cl" or "el") and the ethereum-package client type it was built for. Empty
// fields are not checked. Mode, when set on a CL entry, must equal the
// file's segdiff.mode (default segmented). Roles are the diffusion roles the
// entry maps to flags; a participant may ask only for those (or relay).
type ClientType struct {
	Layer, Type, Mode string
	Roles             []string
}

// Option configures a Checker.
type Option func(*Checker)

// WithClients sets the client-patch entry names that "@clients/<name>" image
// references may use, and where they came from (for messages). Without it,
// every @clients/ reference is reported as unresolvable.
func WithClients(source string, names []string) Option {
	return func(c *Checker) {
		c.clientsSource = source
		c.clients = make(map[string]ClientType, len(names))
		for _, n := range names {
			c.clients[n] = ClientType{}
		}
	}
}

// WithClientTypes is WithClients with each entry's layer and client type.
func WithClientTypes(source string, entries map[string]ClientType) Option {
	return func(c *Checker) {
		c.clientsSource = source
		c.clients = make(map[string]ClientType, len(entries))
		for n, e := range entries {
			c.clients[n] = e
		}
	}
}

// WithManifest is WithClients from a loaded client-patches manifest; it also
// checks that an entry is used for its layer (cl_image / el_image), with
// the cl_type / el_type it was built for, and that a participant's
// segdiff.role is one its CL entry has flags for.
func WithManifest(m *clientpatch.Manifest) Option {
	return func(c *Checker) {
		c.clientsSource = m.Path
		c.clients = make(map[string]ClientType, len(m.Clients))
		for _, cl := range m.Clients {
			c.clients[cl.Name] = ClientType{Layer: cl.Layer, Type: cl.Type, Mode: cl.Mode, Roles: cl.RoleNamesOf()}
		}
	}
}

// New returns a Checker.
func New(opts ...Option) *Checker {
	c := &Checker{}
	for _, o := range opts {
		o(c)
	}
	return c
}

// CheckFile reads and checks one file. The error is for I/O only; problems
// in the content (including YAML syntax) are returned as Problems.
func (c *Checker) CheckFile(path string) ([]Problem, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read network params: %w", err)
	}
	return c.Check(path, data), nil
}

// Check checks the content of one file named file, returning every problem
// sorted by line.
func (c *Checker) Check(file string, data []byte) []Problem {
	r := &run{c: c, file: file, rule: RuleKeys}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		r.addAt(yamlErrorLine(err), "(document)", err.Error())
		return r.problems
	}
	if len(doc.Content) == 0 {
		r.addAt(1, "(document)", "empty file: expected a map of ethereum-package keys")
		return r.problems
	}
	if f, ok := r.walk(doc.Content[0]); ok {
		for _, rule := range Rules {
			r.rule = rule.Name
			rule.check(r, f)
		}
	}
	sort.SliceStable(r.problems, func(i, j int) bool {
		a, b := r.problems[i], r.problems[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Msg < b.Msg
	})
	return r.problems
}

// run holds the state of checking one file.
type run struct {
	c        *Checker
	file     string
	problems []Problem
	rule     string // the rule reporting now
}

func (r *run) add(n *yaml.Node, path, format string, args ...any) {
	r.addAt(n.Line, path, fmt.Sprintf(format, args...))
}

func (r *run) addAt(line int, path, msg string) {
	r.problems = append(r.problems, Problem{File: r.file, Line: line, Path: path, Msg: msg, Rule: r.rule})
}

// int reads an integer scalar, reporting anything else.
func (r *run) int(n *yaml.Node, path string) (int64, bool) {
	v, ok := intOf(n)
	if !ok {
		r.add(n, path, "must be an integer, got %s", kindName(n))
	}
	return v, ok
}
