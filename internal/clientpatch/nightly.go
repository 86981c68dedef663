package clientpatch

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// ParamsDir is the repository folder of the shipped network-params files.
const ParamsDir = "network-params"

// Root is the repository root that params paths (Client.Params,
// Manifest.NightlyExempt) are relative to: the parent of the manifest's
// directory, as in DefaultPath.
func (m *Manifest) Root() string { return filepath.Dir(m.Dir()) }

// Nightly is the nightly workflow's plan: every buildable client a devnet
// job runs is built once (Images), and each client's params files are one
// devnet job each (Devnets), loading the built images its participants use.
type Nightly struct {
	Images  []ImageJob
	Devnets []DevnetJob
	// Shipped counts the network-params files in ParamsDir.
	Shipped int
}

// ImageJob builds one client's image and hands it to the devnet jobs as the
// artifact Artifact (a docker save archive).
type ImageJob struct {
	Client   string `json:"client"`
	Repo     string `json:"repo"`
	Branch   string `json:"branch"`
	Commit   string `json:"commit"`
	Image    string `json:"image"`
	Artifact string `json:"artifact"`
}

// DevnetJob runs the devnet of one params file of Client.
type DevnetJob struct {
	Client string `json:"client"`
	Params string `json:"params"`
	// Images are the tags of the built images the devnet's participants
	// run (ImageJob.Image); published images are pulled.
	Images []string `json:"images"`
	// Tags is the godog tag filter the job runs the features with
	// (NightlyTags).
	Tags string `json:"tags"`
}

// Feature tags the nightly's filters use (the suite's, in package steps;
// a test there holds them to the features).
const (
	tagKurtosis = "@kurtosis"
	tagBytes    = "@bytes"
	tagContract = "@contract"
	tagMixed    = "@mixed"
)

// NightlyTags is the tag filter of a devnet whose beacon nodes run the CL
// entries cls: every @kurtosis scenario but the slow and broken ones (the
// suite skips the rows of another mode than the devnet's), without the
// byte scenarios unless every CL offers a byte source (the contract or a
// per-topic counter), without the agreement of the two sources unless
// some CL offers both the contract and the standard API, and, on a devnet
// whose CLs are patched and unpatched alike (a mixed devnet), with the
// comparison of the two populations opted in.
func NightlyTags(cls []*Client) string {
	tags := tagKurtosis + " && ~@slow && ~@broken"
	allBytes, contract, patched, unpatched := len(cls) > 0, false, false, false
	for _, c := range cls {
		allBytes = allBytes && (c.Offers(SourceContract) || c.Offers(SourceTopicBytes))
		contract = contract || c.Offers(SourceContract) && c.Offers(SourceStandardAPI)
		patched = patched || c.Offers(SourceContract)
		unpatched = unpatched || !c.Offers(SourceContract)
	}
	if !allBytes {
		tags += " && ~" + tagBytes
	}
	if !contract {
		tags += " && ~" + tagContract
	}
	if patched && unpatched {
		tags += "," + tagMixed
	}
	return tags
}

// ArtifactPrefix starts the name of every ImageJob artifact.
const ArtifactPrefix = "client-image-"

// Nightly reads every params file the clients list and returns the plan.
// A listed file that is missing, does not parse, does not run its client,
// or asks for an unknown client, a client of the wrong layer or a role its
// client has no flags for is an error, and so is a network-params file in
// ParamsDir that no client lists and NightlyExempt does not name (no
// nightly job would run it), or an exempt file that is missing or listed.
// All failures are returned joined, one line each.
func (m *Manifest) Nightly() (*Nightly, error) {
	n := &Nightly{Images: []ImageJob{}, Devnets: []DevnetJob{}}
	var errs []error
	listed := map[string]bool{}
	built := map[string]bool{}
	for i := range m.Clients {
		c := &m.Clients[i]
		for j, p := range c.Params {
			listed[p] = true
			uses, err := m.paramsClients(p)
			if err != nil {
				errs = append(errs, m.fieldErr(i, "params", "entry %d: %v", j, err))
				continue
			}
			if !slices.Contains(uses, c) {
				names := make([]string, len(uses))
				for k, u := range uses {
					names[k] = u.Name
				}
				errs = append(errs, m.fieldErr(i, "params", "entry %d: %s runs no participant on %s%s (it runs: %s); list it under the client it runs",
					j, p, ImageRefPrefix, c.Name, strings.Join(names, ", ")))
				continue
			}
			job := DevnetJob{Client: c.Name, Params: p, Images: []string{}}
			var cls []*Client
			for _, u := range uses {
				if u.Buildable() {
					job.Images = append(job.Images, u.Image)
					built[u.Name] = true
				}
				if u.Layer == LayerCL {
					cls = append(cls, u)
				}
			}
			job.Tags = NightlyTags(cls)
			n.Devnets = append(n.Devnets, job)
		}
	}
	for _, c := range m.Clients {
		if built[c.Name] {
			n.Images = append(n.Images, ImageJob{c.Name, c.Repo, c.Branch, c.Commit, c.Image, ArtifactPrefix + c.Name})
		}
	}

	shipped, err := filepath.Glob(filepath.Join(m.Root(), ParamsDir, "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", ParamsDir, err)
	}
	n.Shipped = len(shipped)
	for _, f := range shipped {
		p := ParamsDir + "/" + filepath.Base(f)
		if !listed[p] && m.NightlyExempt[p] == "" {
			errs = append(errs, fmt.Errorf("%w: %s: %s is in no client's params, so no nightly job runs it; add it to the params of the client it runs, or to nightly_exempt with the reason",
				ErrInvalid, m.Path, p))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(m.NightlyExempt)) {
		if listed[p] {
			errs = append(errs, fmt.Errorf("%w: %s: nightly_exempt.%s: a client lists it in params, so it is not exempt; remove one", ErrInvalid, m.Path, p))
		} else if _, err := os.Stat(filepath.Join(m.Root(), filepath.FromSlash(p))); err != nil {
			errs = append(errs, fmt.Errorf("%w: %s: nightly_exempt.%s: no such file under %s", ErrInvalid, m.Path, p, m.Root()))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return n, nil
}

// LoadNightly reads the manifest at path (LoadFile) and plans its nightly
// (Manifest.Nightly).
func LoadNightly(path string) (*Manifest, *Nightly, error) {
	m, err := LoadFile(path)
	if err != nil {
		return nil, nil, err
	}
	n, err := m.Nightly()
	if err != nil {
		return nil, nil, err
	}
	return m, n, nil
}

// paramsClients reads the network-params file p (relative to Root) and
// returns the entries its @clients references name, in manifest order,
// after checking that every participant resolves (ResolveParticipants).
func (m *Manifest) paramsClients(p string) ([]*Client, error) {
	data, err := os.ReadFile(filepath.Join(m.Root(), filepath.FromSlash(p)))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such file (paths are relative to the repository root %s)", p, m.Root())
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	var args map[string]any
	if err := yaml.Unmarshal(data, &args); err != nil {
		return nil, fmt.Errorf("parse %s: %s", p, oneLine(err.Error()))
	}
	refs := map[string]bool{}
	collectRefs(args, refs)
	if err := ResolveParticipants(args, m); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	var out []*Client
	for i := range m.Clients {
		if refs[m.Clients[i].Name] {
			out = append(out, &m.Clients[i])
		}
	}
	return out, nil
}

// collectRefs adds the entry name of every "@clients/<name>" string in v.
func collectRefs(v any, refs map[string]bool) {
	switch x := v.(type) {
	case string:
		if IsImageRef(x) {
			refs[strings.TrimPrefix(x, ImageRefPrefix)] = true
		}
	case map[string]any:
		for _, e := range x {
			collectRefs(e, refs)
		}
	case []any:
		for _, e := range x {
			collectRefs(e, refs)
		}
	}
}
