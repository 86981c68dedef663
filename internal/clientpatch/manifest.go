// Package clientpatch reads client-patches/clients.yaml, the manifest of the
// client images a segdiff devnet runs: for each client the upstream repository,
// branch and pinned commit, the ordered patches that add the segdiff metrics
// contract, the build recipe and the image tag it produces, and the extra
// CL/EL parameters that switch segmented diffusion on. It also resolves the
// "@clients/<name>" image references of network-params files, and checks,
// applies and builds the patches (patch.go, apply.go).
//
// A Manifest is immutable after LoadFile returns and safe for concurrent use.
package clientpatch

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/segdiff/segdiff/diffusion/role"

	"gopkg.in/yaml.v3"

	"github.com/segdiff/segdiff/diffusion/mode"
)

// DefaultPath is the manifest's path relative to the repository root.
const DefaultPath = "client-patches/clients.yaml"

// Layers of a client, the ethereum-package participant prefix its image goes to.
const (
	LayerCL = "cl" // consensus layer: cl_image, cl_extra_params
	LayerEL = "el" // execution layer: el_image, el_extra_params
)

// Manifest is the parsed, validated clients.yaml.
type Manifest struct {
	// Path is the file the manifest was read from; patch and Dockerfile
	// paths are relative to its directory.
	Path    string   `yaml:"-"`
	Version int      `yaml:"version"`
	Clients []Client `yaml:"clients"`
	// NightlyExempt maps a network-params file (repository-relative) that
	// no client lists in Params, so no nightly job runs, to the reason why.
	// Nightly fails on a shipped file that neither names.
	NightlyExempt map[string]string `yaml:"nightly_exempt"`
}

// Client is one manifest entry. An entry with a Repo is built from source
// (Branch, Commit, Patches, Build); an entry without one names a published
// image and has nothing to build.
type Client struct {
	// Name is the entry's key, referenced as "@clients/<Name>".
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Layer is "cl" or "el".
	Layer string `yaml:"layer"`
	// Type is the ethereum-package cl_type / el_type the image runs as.
	Type string `yaml:"type"`
	// Repo is the GitHub repository, "owner/name".
	Repo string `yaml:"repo"`
	// Branch is the branch the nightly job follows (its head), and the one
	// Commit was taken from.
	Branch string `yaml:"branch"`
	// Commit is the pinned 40-hex commit the patches are known to apply to.
	Commit string `yaml:"commit"`
	// Patches are paths relative to the manifest directory, applied in order.
	Patches []string `yaml:"patches"`
	// Build is the recipe that turns the patched checkout into Image.
	Build *Build `yaml:"build"`
	// Image is the Docker reference the entry resolves to (always tagged).
	Image string `yaml:"image"`
	// VCImage, when set, is given to participants that leave vc_image empty
	// (ethereum-package derives a Prysm VC image from the CL image's name,
	// which fails for a patched image; see ethereum-package.md §2).
	VCImage string `yaml:"vc_image"`
	// CLExtraParams / ELExtraParams are appended to the participant's
	// cl_extra_params / el_extra_params when the entry is referenced.
	CLExtraParams []string `yaml:"cl_extra_params"`
	ELExtraParams []string `yaml:"el_extra_params"`
	// Roles maps an adversarial diffusion role (RoleNames; not relay, the
	// default every client runs without parameters) to the extra CL
	// parameters that make this image play it. A participant asking for a
	// role (its segdiff.role) gets them appended to its cl_extra_params; a
	// role the entry does not list is refused (ResolveParticipants and
	// `segdiff params check`).
	Roles map[string][]string `yaml:"roles"`
	// Mode is the diffusion mode the image runs with these parameters
	// (whole, segmented or segmented-batch).
	Mode string `yaml:"mode"`
	// Params are the network-params files the nightly job runs this entry with.
	Params []string `yaml:"params"`
	// Sources are the measurement sources a CL image offers the suite
	// (Source*; default the standard API alone, which every glamsterdam
	// client has): its nightly jobs run the scenarios those sources can
	// measure and exclude the others on purpose (NightlyTags).
	Sources []string `yaml:"sources"`

	line int // line of the entry in the manifest, for later errors
}

// Build is a Docker build recipe. The build context is the patched source
// checkout; Dockerfile is relative to the manifest directory.
type Build struct {
	Dockerfile string            `yaml:"dockerfile"`
	Target     string            `yaml:"target"`
	Args       map[string]string `yaml:"args"`
}

// The measurement sources a CL image can offer.
const (
	// SourceContract: the payload_diffusion_* series (segdiff's patches).
	SourceContract = "contract"
	// SourceStandardAPI: the beacon API event stream every glamsterdam
	// client emits (execution_payload_gossip, execution_payload_available).
	SourceStandardAPI = "standard-api"
	// SourceTopicBytes: a per-topic byte counter of received gossip
	// (Prysm's p2p_pubsub_rpc_recv_pub_bytes_total).
	SourceTopicBytes = "topic-bytes"
)

// Sources lists every source name, in document order.
var Sources = []string{SourceContract, SourceStandardAPI, SourceTopicBytes}

// Offers reports whether the entry offers source (a CL entry that lists
// none offers the standard API).
func (c *Client) Offers(source string) bool {
	if len(c.Sources) == 0 && c.Layer == LayerCL {
		return source == SourceStandardAPI
	}
	return slices.Contains(c.Sources, source)
}

// Buildable reports whether the entry is built from source.
func (c *Client) Buildable() bool { return c.Repo != "" }

// Line is the manifest line the entry starts on (0 if unknown).
func (c *Client) Line() int { return c.line }

// Lookup returns the entry called name.
func (m *Manifest) Lookup(name string) (*Client, bool) {
	for i := range m.Clients {
		if m.Clients[i].Name == name {
			return &m.Clients[i], true
		}
	}
	return nil, false
}

// Names lists the entries' names in manifest order.
func (m *Manifest) Names() []string {
	names := make([]string, len(m.Clients))
	for i, c := range m.Clients {
		names[i] = c.Name
	}
	return names
}

// Dir is the directory patch and Dockerfile paths are relative to.
func (m *Manifest) Dir() string { return filepath.Dir(m.Path) }

// PatchPaths returns c's patch files as paths usable from the working directory.
func (m *Manifest) PatchPaths(c *Client) []string {
	out := make([]string, len(c.Patches))
	for i, p := range c.Patches {
		out[i] = filepath.Join(m.Dir(), filepath.FromSlash(p))
	}
	return out
}

// ErrInvalid is wrapped by every manifest validation error.
var ErrInvalid = errors.New("invalid client manifest")

// LoadFile reads and validates the manifest at path. Unknown keys, wrong
// types and every rule in validate are errors naming path:line and the key.
func LoadFile(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read client manifest: %w", err)
	}
	m, err := parse(path, data)
	if err != nil {
		return nil, err
	}
	if err := m.validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// unknownField matches yaml.v3's KnownFields error for one entry.
var unknownField = regexp.MustCompile(`^line (\d+): field (\S+) not found in type \S+$`)

// yamlLine matches yaml.v3's "line N: msg" error entries.
var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

func parse(path string, data []byte) (*Manifest, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s: %w: empty file", path, ErrInvalid)
	}
	m := &Manifest{Path: path}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(m); err != nil {
		return nil, positionErr(path, err)
	}
	// Positions for the validation errors that come later.
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, positionErr(path, err)
	}
	if seq := mappingValue(documentMapping(&root), "clients"); seq != nil && seq.Kind == yaml.SequenceNode {
		for i, item := range seq.Content {
			if i < len(m.Clients) {
				m.Clients[i].line = item.Line
			}
		}
	}
	return m, nil
}

// positionErr rewrites yaml.v3's errors as "path:line: ..." lines.
func positionErr(path string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, 0, len(te.Errors))
		for _, e := range te.Errors {
			if g := unknownField.FindStringSubmatch(e); g != nil {
				msgs = append(msgs, fmt.Sprintf("%s:%s: unknown key %q", path, g[1], g[2]))
				continue
			}
			if g := yamlLine.FindStringSubmatch(e); g != nil {
				msgs = append(msgs, fmt.Sprintf("%s:%s: %s", path, g[1], g[2]))
				continue
			}
			msgs = append(msgs, fmt.Sprintf("%s: %s", path, e))
		}
		return fmt.Errorf("%w: %s", ErrInvalid, strings.Join(msgs, "; "))
	}
	if g := yamlLine.FindStringSubmatch(err.Error()); g != nil {
		return fmt.Errorf("%w: %s:%s: %s", ErrInvalid, path, g[1], g[2])
	}
	return fmt.Errorf("%w: %s: %v", ErrInvalid, path, err)
}

func documentMapping(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	return n
}

func mappingValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

var (
	nameRE   = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)
	repoRE   = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$`)
	commitRE = regexp.MustCompile(`^[0-9a-f]{40}$`)
	branchRE = regexp.MustCompile(`^[A-Za-z0-9._/-]+$`)
	patchRE  = regexp.MustCompile(`^(\d{4})-[A-Za-z0-9._-]+\.patch$`)
	// imageRE is a Docker reference with a mandatory tag: optional registry
	// host[:port], lower-case path components, ":" tag.
	imageRE = regexp.MustCompile(`^(?:[a-zA-Z0-9.-]+(?::[0-9]+)?/)?[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	paramRE = regexp.MustCompile(`^--?[A-Za-z0-9]`)
)

// modes are the diffusion modes patched clients can run.
var modes = mode.ClientNames()

// fieldErr is one validation failure, positioned at its entry.
func (m *Manifest) fieldErr(i int, key, format string, args ...any) error {
	c := &m.Clients[i]
	name := c.Name
	if name == "" {
		name = "#" + strconv.Itoa(i)
	}
	return fmt.Errorf("%w: %s:%d: clients[%d] (%s).%s: %s", ErrInvalid, m.Path, c.line, i, name, key, fmt.Sprintf(format, args...))
}

// validate checks every rule; all failures are returned joined.
func (m *Manifest) validate() error {
	var errs []error
	if m.Version != 1 {
		errs = append(errs, fmt.Errorf("%w: %s: version: want 1, got %d", ErrInvalid, m.Path, m.Version))
	}
	if len(m.Clients) == 0 {
		errs = append(errs, fmt.Errorf("%w: %s: clients: no entries", ErrInvalid, m.Path))
	}
	for _, p := range slices.Sorted(maps.Keys(m.NightlyExempt)) {
		switch {
		case !validRepoPath(p):
			errs = append(errs, fmt.Errorf("%w: %s: nightly_exempt: want a repository-relative path, got %q", ErrInvalid, m.Path, p))
		case strings.TrimSpace(m.NightlyExempt[p]) == "":
			errs = append(errs, fmt.Errorf("%w: %s: nightly_exempt.%s: no reason: say why no nightly job runs it", ErrInvalid, m.Path, p))
		}
	}
	seen := map[string]int{}
	for i := range m.Clients {
		c := &m.Clients[i]
		if !nameRE.MatchString(c.Name) {
			errs = append(errs, m.fieldErr(i, "name", "want lower-case words joined by '-', got %q", c.Name))
		} else if j, dup := seen[c.Name]; dup {
			errs = append(errs, m.fieldErr(i, "name", "duplicate of clients[%d] (line %d)", j, m.Clients[j].line))
		} else {
			seen[c.Name] = i
		}
		errs = append(errs, m.validateClient(i)...)
	}
	return errors.Join(errs...)
}

func (m *Manifest) validateClient(i int) []error {
	c := &m.Clients[i]
	var errs []error
	bad := func(key, format string, args ...any) { errs = append(errs, m.fieldErr(i, key, format, args...)) }

	switch c.Layer {
	case LayerCL:
		if len(c.ELExtraParams) > 0 {
			bad("el_extra_params", "a cl entry cannot carry EL parameters")
		}
	case LayerEL:
		if len(c.CLExtraParams) > 0 {
			bad("cl_extra_params", "an el entry cannot carry CL parameters")
		}
		if c.VCImage != "" {
			bad("vc_image", "only a cl entry can name a validator client image")
		}
	default:
		bad("layer", "want %q or %q, got %q", LayerCL, LayerEL, c.Layer)
	}
	if c.Type == "" {
		bad("type", "missing (the ethereum-package cl_type/el_type, e.g. prysm, geth)")
	}
	if c.Mode != "" && !slices.Contains(modes, c.Mode) {
		bad("mode", "want one of %s, got %q", strings.Join(modes, ", "), c.Mode)
	}
	errs = append(errs, checkImage(c.Image, c.Layer, func(f string, a ...any) { bad("image", f, a...) })...)
	if c.VCImage != "" {
		errs = append(errs, checkImage(c.VCImage, LayerCL, func(f string, a ...any) { bad("vc_image", f, a...) })...)
	}
	for j, p := range append(slices.Clone(c.CLExtraParams), c.ELExtraParams...) {
		if !paramRE.MatchString(p) {
			bad("extra_params", "entry %d: want a flag starting with '-', got %q", j, p)
		}
	}
	errs = append(errs, m.checkRoles(i)...)
	errs = append(errs, m.checkSources(i)...)
	for j, p := range c.Params {
		if !validRepoPath(p) {
			bad("params", "entry %d: want a repository-relative path, got %q", j, p)
		}
	}

	if !c.Buildable() {
		if c.Branch != "" || c.Commit != "" || len(c.Patches) > 0 || c.Build != nil {
			bad("repo", "missing, but branch/commit/patches/build are set: an entry without a repository names a published image and builds nothing")
		}
		return errs
	}
	if !repoRE.MatchString(c.Repo) {
		bad("repo", "want owner/name, got %q", c.Repo)
	}
	if !branchRE.MatchString(c.Branch) {
		bad("branch", "want a branch name, got %q", c.Branch)
	}
	if !commitRE.MatchString(c.Commit) {
		bad("commit", "want 40 lower-case hex digits, got %q", c.Commit)
	}
	if c.Build == nil {
		bad("build", "missing: a repository entry needs a build recipe")
	} else if c.Build.Dockerfile == "" {
		bad("build.dockerfile", "missing")
	} else if st, err := os.Stat(filepath.Join(m.Dir(), filepath.FromSlash(c.Build.Dockerfile))); err != nil || st.IsDir() {
		bad("build.dockerfile", "%s: no such file (paths are relative to %s)", c.Build.Dockerfile, m.Dir())
	} else if err := m.checkLauncherBinary(c); err != nil {
		bad("build.dockerfile", "%v", err)
	}
	errs = append(errs, m.checkPatchList(i)...)
	return errs
}

// validRepoPath reports whether p is a repository-relative path.
func validRepoPath(p string) bool {
	return p != "" && !filepath.IsAbs(p) && !strings.Contains(p, "..")
}

// checkRoles checks the roles mapping: known adversarial roles of a CL
// entry, each with at least one flag.
func (m *Manifest) checkRoles(i int) []error {
	c := &m.Clients[i]
	var errs []error
	bad := func(key, format string, args ...any) { errs = append(errs, m.fieldErr(i, key, format, args...)) }
	if len(c.Roles) > 0 && c.Layer != LayerCL {
		bad("roles", "only a cl entry can map roles: they are beacon-node flags")
	}
	for _, name := range slices.Sorted(maps.Keys(c.Roles)) {
		key := "roles." + name
		switch {
		case name == role.Relay.Name:
			bad(key, "relay is every client's default and takes no parameters; map only %s", strings.Join(adversarialRoles(), ", "))
		case !slices.Contains(adversarialRoles(), name):
			bad(key, "unknown role %q; use one of %s", name, strings.Join(adversarialRoles(), ", "))
		case len(c.Roles[name]) == 0:
			bad(key, "no parameters: list the flags that make the image play %s", name)
		}
		for j, p := range c.Roles[name] {
			if !paramRE.MatchString(p) {
				bad(key, "entry %d: want a flag starting with '-', got %q", j, p)
			}
		}
	}
	return errs
}

// checkSources checks a CL entry's sources: known names, each once; an EL
// entry has none.
func (m *Manifest) checkSources(i int) []error {
	c := &m.Clients[i]
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, m.fieldErr(i, "sources", format, args...)) }
	if c.Layer != LayerCL {
		if len(c.Sources) > 0 {
			bad("only a cl entry offers measurement sources: they are the beacon node's")
		}
		return errs
	}
	for j, s := range c.Sources {
		switch {
		case !slices.Contains(Sources, s):
			bad("entry %d: unknown source %q; use %s", j, s, strings.Join(Sources, ", "))
		case slices.Index(c.Sources, s) != j:
			bad("entry %d: %s listed twice", j, s)
		}
	}
	return errs
}

// checkLauncherBinary fails when c's Dockerfile does not put the binary
// ethereum-package's launcher executes (LauncherBinary) in the image.
func (m *Manifest) checkLauncherBinary(c *Client) error {
	want := LauncherBinary(c.Layer, c.Type)
	if want == "" {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(m.Dir(), filepath.FromSlash(c.Build.Dockerfile)))
	if err != nil {
		return fmt.Errorf("read %s: %w", c.Build.Dockerfile, err)
	}
	files, err := ImageFiles(data)
	if err != nil {
		return fmt.Errorf("%s: %w", c.Build.Dockerfile, err)
	}
	if !slices.Contains(files, want) {
		return fmt.Errorf("%s puts no %s in the image, but ethereum-package's %s launcher runs it (sh -c \"exec %s ...\"); COPY the binary to %s or link it there (the image has: %s)",
			c.Build.Dockerfile, want, c.Type, want, want, strings.Join(files, ", "))
	}
	return nil
}

// checkImage checks a Docker reference, and the substrings ethereum-package
// sniffs from image names (ethereum-package.md §2).
func checkImage(img, layer string, bad func(string, ...any)) []error {
	var errs []error
	switch {
	case img == "":
		bad("missing")
	case strings.HasPrefix(img, ImageRefPrefix):
		bad("%q is a reference; the manifest must name a real image", img)
	case !imageRE.MatchString(img):
		bad("want a tagged Docker reference [registry/]name:tag, got %q", img)
	case strings.Contains(img, "frame"):
		bad("%q contains \"frame\", which makes ethereum-package enable FRAMES in genesis", img)
	case layer == LayerEL && (strings.Contains(img, "builder") || strings.Contains(img, "suave")):
		bad("%q contains \"builder\"/\"suave\", which makes ethereum-package rewrite the EL's API flags", img)
	}
	return errs
}

// checkPatchList checks the patches exist, are named NNNN-*.patch, are
// numbered 0001, 0002, … in list order, and that every .patch file in their
// directories is listed (a forgotten patch is an error, not a silent skip).
func (m *Manifest) checkPatchList(i int) []error {
	c := &m.Clients[i]
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, m.fieldErr(i, "patches", format, args...)) }
	dirs := map[string]bool{}
	listed := map[string]bool{}
	for j, p := range c.Patches {
		base := filepath.Base(p)
		g := patchRE.FindStringSubmatch(base)
		if g == nil {
			bad("entry %d: want NNNN-name.patch, got %q", j, p)
			continue
		}
		if n, _ := strconv.Atoi(g[1]); n != j+1 {
			bad("entry %d: %s is out of order: want number %04d", j, p, j+1)
		}
		full := filepath.Join(m.Dir(), filepath.FromSlash(p))
		if st, err := os.Stat(full); err != nil || st.IsDir() {
			bad("entry %d: %s: no such file (paths are relative to %s)", j, p, m.Dir())
			continue
		}
		dirs[filepath.Dir(full)] = true
		listed[full] = true
	}
	for d := range dirs {
		files, _ := filepath.Glob(filepath.Join(d, "*.patch"))
		for _, f := range files {
			if !listed[f] {
				bad("%s is in the patch directory but not listed", f)
			}
		}
	}
	return errs
}
