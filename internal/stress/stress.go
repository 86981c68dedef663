// Package stress is the one list of the conditions of the design's stress
// list a devnet may run under: each adversarial role's share of the nodes
// (package role, by the role's name), faults (lost deliveries or requests,
// parts the source omits, spread uplinks) and the payload's size. A stress
// is a set of conditions with values, written "withholder=50%, loss-data=5%"
// in features and as a mapping in sweep grids; the embedded devnet's run
// spec carries it, the CLI offers a flag per condition, and a sweep grid's
// stress axis names them. A new role brings its own condition, which the
// embedded devnet applies by placing the role. A new fault condition is one
// Register call plus its effect in the embedded devnet (conditionEffects in
// internal/devnet/embedded/simulate.go): until it has one, every run spec
// holding it fails validation, naming it, rather than running without it.
package stress

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/segdiff/segdiff/diffusion/role"
	"github.com/segdiff/segdiff/internal/suggest"
)

// Kind says what a condition's value is and which values it takes.
type Kind int

// Kinds of condition values.
const (
	// Share is a share of the non-builder nodes, 0..0.5 (percentages
	// allowed).
	Share Kind = iota
	// Probability is a per-arrival probability, 0 ≤ p < 1 (percentages
	// allowed).
	Probability
	// Spread is a relative spread around a mean, 0..0.9 (percentages
	// allowed).
	Spread
	// Count is a whole number of things, ≥ 0.
	Count
	// Bytes is a whole number of bytes, > 0.
	Bytes
	// Mbps is a whole link rate in Mbps, > 0.
	Mbps
)

// Condition is one stress condition.
type Condition struct {
	// Name is how features, grids and flags name it ("loss-data").
	Name string
	// Doc says what the value is, in a phrase.
	Doc  string
	Kind Kind
	// Role is set for a role's share: the condition is named after the role.
	Role bool
}

// Check reports whether v is a value of c.
func (c Condition) Check(v float64) error {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0) || v < 0:
		return fmt.Errorf("%s=%v: want a non-negative number", c.Name, v)
	case c.Kind == Share && v > 0.5:
		return fmt.Errorf("%s=%v: want a share 0..0.5 of the non-builder nodes", c.Name, v)
	case c.Kind == Probability && v >= 1:
		return fmt.Errorf("%s=%v: want a probability 0 ≤ p < 1", c.Name, v)
	case c.Kind == Spread && v > 0.9:
		return fmt.Errorf("%s=%v: want a spread 0..0.9", c.Name, v)
	case (c.Kind == Count || c.Kind == Bytes || c.Kind == Mbps) && v != math.Trunc(v):
		return fmt.Errorf("%s=%v: want a whole number", c.Name, v)
	case c.Kind == Bytes && v == 0:
		return fmt.Errorf("%s=0: want a size above 0 bytes", c.Name)
	case c.Kind == Mbps && (v == 0 || v > 100_000):
		return fmt.Errorf("%s=%v: want a rate 1..100000 Mbps", c.Name, v)
	}
	return nil
}

// Fractional reports whether c's values may be written as percentages.
func (c Condition) Fractional() bool {
	return c.Kind == Share || c.Kind == Probability || c.Kind == Spread
}

// The fault and size conditions of the design's stress list.
var (
	LossData     = Condition{Name: "loss-data", Doc: "probability that a payload delivery is dropped on arrival (0 ≤ p < 1)", Kind: Probability}
	LossRequests = Condition{Name: "loss-requests", Doc: "probability that a request (IWANT, WANT) is dropped on arrival (0 ≤ p < 1)", Kind: Probability}
	Omit         = Condition{Name: "omit", Doc: "parts (segments) of each payload the builder never sends", Kind: Count}
	UplinkSpread = Condition{Name: "uplink-spread", Doc: "uplinks drawn uniformly within ±this share of their class's rate, same mean (0..0.9)", Kind: Spread}
	PayloadSize  = Condition{Name: "payload-size", Doc: "raw payload body size in bytes (128 KiB–2 MiB in the stress list)", Kind: Bytes}
	// ThinUplink is the design's thin links: every node's uplink, the
	// builder's included (10–50 Mbps in the stress list), over a 100 Mbps
	// downlink, or twice the uplink at 10 Mbps and below.
	ThinUplink = Condition{Name: "uplink-mbps", Doc: "every node's uplink in Mbps, the builder's too (thin links: 10–50), downlink 100 Mbps (twice the uplink at 10 and below)", Kind: Mbps}
)

// ThinDownlink is the downlink that goes with a thin uplink of up Mbps.
func ThinDownlink(up int) int {
	if up <= 10 {
		return 2 * up
	}
	return 100
}

var (
	mu     sync.RWMutex
	faults = []Condition{LossData, LossRequests, Omit, UplinkSpread, PayloadSize, ThinUplink}
	// builtins is how many conditions the list above holds: Unregister
	// removes only conditions Register added after them.
	builtins = len(faults)
)

// Register adds a condition after the others; its name must be new and
// must not be a role's.
func Register(c Condition) error {
	if c.Name == "" || strings.ContainsAny(c.Name, "=, ") {
		return fmt.Errorf("register stress condition %q: want a name without '=', ',' or spaces", c.Name)
	}
	if _, dup := Lookup(c.Name); dup {
		return fmt.Errorf("register stress condition %q: registered twice (or a role's name)", c.Name)
	}
	mu.Lock()
	defer mu.Unlock()
	faults = append(faults, c)
	return nil
}

// Unregister removes a condition Register added (tests undo what they add);
// the package's own conditions stay.
func Unregister(name string) {
	mu.Lock()
	defer mu.Unlock()
	added := slices.DeleteFunc(faults[builtins:], func(c Condition) bool { return c.Name == name })
	faults = faults[:builtins+len(added)]
}

// Conditions returns every condition: a share per adversarial role (package
// role's order), then the faults and sizes in registration order.
func Conditions() []Condition {
	var out []Condition
	for _, r := range role.Adversarial() {
		out = append(out, Condition{Name: r.Name, Doc: "share of non-builder nodes that play " + r.Name + ": " + r.Doc + " (0..0.5)", Kind: Share, Role: true})
	}
	mu.RLock()
	defer mu.RUnlock()
	return append(out, faults...)
}

// Names returns every condition's name, in Conditions' order.
func Names() []string {
	var out []string
	for _, c := range Conditions() {
		out = append(out, c.Name)
	}
	return out
}

// Lookup returns the condition called name.
func Lookup(name string) (Condition, bool) {
	for _, c := range Conditions() {
		if c.Name == name {
			return c, true
		}
	}
	return Condition{}, false
}

// Set is a stress: a value per condition name. The zero Set is no stress.
type Set map[string]float64

// String is s's canonical form: names sorted, values as plain numbers
// ("loss-data=0.05,withholder=0.5"); "" for no stress.
func (s Set) String() string {
	terms := make([]string, 0, len(s))
	for _, k := range slices.Sorted(maps.Keys(s)) {
		terms = append(terms, k+"="+strconv.FormatFloat(s[k], 'f', -1, 64))
	}
	return strings.Join(terms, ",")
}

// Check checks every condition of s is known and its value is one of its
// kind, and that the role shares leave some honest nodes.
func (s Set) Check() error {
	var roles float64
	for _, k := range slices.Sorted(maps.Keys(s)) {
		c, ok := Lookup(k)
		if !ok {
			return unknown(k)
		}
		if err := c.Check(s[k]); err != nil {
			return err
		}
		if c.Role {
			roles += s[k]
		}
	}
	if roles > 1 {
		return fmt.Errorf("the role shares add up to %v: want at most 1", roles)
	}
	return nil
}

func unknown(name string) error {
	names := Names()
	return fmt.Errorf("unknown stress condition %q (known: %s)%s", name, strings.Join(names, ", "), suggest.DidYouMean(name, names, ""))
}

// Parse reads a stress written "withholder=50%, loss-data=5%" (an empty
// string is no stress) and checks it. Percentages are accepted for shares,
// probabilities and spreads.
func Parse(text string) (Set, error) {
	s := Set{}
	if strings.TrimSpace(text) == "" {
		return s, nil
	}
	for _, term := range strings.Split(text, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(term), "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("stress %q: term %q is not condition=value", text, term)
		}
		c, known := Lookup(k)
		if !known {
			return nil, fmt.Errorf("stress %q: %w", text, unknown(k))
		}
		if _, dup := s[k]; dup {
			return nil, fmt.Errorf("stress %q: %s set twice", text, k)
		}
		f, err := ParseValue(c, v)
		if err != nil {
			return nil, fmt.Errorf("stress %q: %w", text, err)
		}
		s[k] = f
	}
	if err := s.Check(); err != nil {
		return nil, fmt.Errorf("stress %q: %w", text, err)
	}
	return s, nil
}

// ParseValue reads one value of c: a number, or for fractional kinds a
// percentage ("50%").
func ParseValue(c Condition, v string) (float64, error) {
	pct := strings.HasSuffix(v, "%")
	if pct && !c.Fractional() {
		return 0, fmt.Errorf("%s is a whole number, not a percentage", c.Name)
	}
	f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
	if err != nil {
		return 0, fmt.Errorf("%s=%q is not a number", c.Name, v)
	}
	if pct {
		f /= 100
	}
	return f, c.Check(f)
}
