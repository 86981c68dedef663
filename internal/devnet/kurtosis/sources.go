package kurtosis

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// EnvPackageSources is the default of `segdiff devnet up --package-sources`:
// a directory holding the source archives of ethereum-package and the
// packages it imports, with their SHA256SUMS (WithPackageSources).
const EnvPackageSources = "SEGDIFF_PACKAGE_SOURCES"

// SourcesSumsFile is the checksum list in a package-sources directory, in
// sha256sum's format ("<hex>  <file>" per line).
const SourcesSumsFile = "SHA256SUMS"

// sourcePackage is one remote Starlark package a run of the wrapper loads:
// ethereum-package, which main.star imports, and the four packages
// ethereum-package imports (postgres-package imports db-adminer-package).
type sourcePackage struct {
	// id is the package's locator root, its kurtosis.yml name.
	id string
	// archive is its file in the sources directory; it unpacks to dir/.
	archive, dir string
}

// sourcePackages are the packages WithPackageSources makes local.
var sourcePackages = []sourcePackage{
	{id: "github.com/ethpandaops/ethereum-package", archive: "ethereum-package.tar.gz", dir: "ethereum-package"},
	{id: "github.com/kurtosis-tech/postgres-package", archive: "postgres-package.tar.gz", dir: "postgres-package"},
	{id: "github.com/kurtosis-tech/redis-package", archive: "redis-package.tar.gz", dir: "redis-package"},
	{id: "github.com/kurtosis-tech/prometheus-package", archive: "prometheus-package.tar.gz", dir: "prometheus-package"},
	{id: "github.com/bharath-123/db-adminer-package", archive: "db-adminer-package.tar.gz", dir: "db-adminer-package"},
}

// stagingFormat names the layout unpackSources writes; it is part of the
// staging directory's key, so changing what unpacking writes means bumping
// it rather than reusing a tree laid out the old way.
const stagingFormat = "segdiff package sources v1"

// stagingManifest is the file in a staging directory that lists what it
// was unpacked from; it is written before the directory is renamed into
// place, so its presence and content mark a complete tree.
const stagingManifest = "SOURCES"

// verifiedArchive is an archive read whole and checked against SHA256SUMS;
// data is what was hashed, so what is unpacked is what was checked.
type verifiedArchive struct {
	pkg    sourcePackage
	sum    string
	data   []byte
	commit string // the commit git archive recorded ("" when absent)
}

// stageSources prepares the run of p.packageDir from local sources: it
// checks the archives in p.packageSources against SHA256SUMS, unpacks them
// once into a staging directory under p.sourcesCache keyed by their hashes
// (reused by later runs), and stages a copy of the wrapper package whose
// kurtosis.yml replaces every package of sourcePackages by its unpacked
// absolute path. It returns the staged package's directory and a cleanup
// that removes the copy (never the committed package or the unpacked tree).
func stageSources(ctx context.Context, p *parameters) (dir string, cleanup func(), err error) {
	src, err := filepath.Abs(p.packageSources)
	if err != nil {
		return "", nil, fmt.Errorf("package sources %s: %w", p.packageSources, err)
	}
	archives, err := verifySources(src)
	if err != nil {
		return "", nil, err
	}
	pins, err := wrapperPins(p.packageDir)
	if err != nil {
		return "", nil, err
	}
	for _, a := range archives {
		if pin := pins[a.pkg.id]; a.commit != "" && pin != "" && !strings.HasPrefix(a.commit, pin) {
			return "", nil, fmt.Errorf("package sources: %s holds %s at commit %s, but package %s pins %s@%s",
				a.pkg.archive, a.pkg.id, a.commit, p.packageDir, a.pkg.id, pin)
		}
	}
	cache := p.sourcesCache
	if cache == "" {
		if cache, err = defaultSourcesCache(); err != nil {
			return "", nil, err
		}
	}
	if cache, err = filepath.Abs(cache); err != nil {
		return "", nil, fmt.Errorf("package sources cache: %w", err)
	}
	tree, reused, err := unpackSources(ctx, cache, archives)
	if err != nil {
		return "", nil, err
	}
	if reused {
		fmt.Fprintf(p.log, "package sources: %d archives match %s; reusing %s\n", len(archives), filepath.Join(src, SourcesSumsFile), tree)
	} else {
		fmt.Fprintf(p.log, "package sources: %d archives match %s; unpacked into %s\n", len(archives), filepath.Join(src, SourcesSumsFile), tree)
	}
	local := map[string]string{}
	for _, sp := range sourcePackages {
		local[sp.id] = filepath.Join(tree, sp.dir)
	}
	staged, err := stageWrapper(p.packageDir, local, src)
	if err != nil {
		return "", nil, err
	}
	return staged, func() { os.RemoveAll(staged) }, nil
}

// defaultSourcesCache is <user cache dir>/segdiff/package-sources.
func defaultSourcesCache() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("package sources cache: %w (set XDG_CACHE_HOME)", err)
	}
	return filepath.Join(dir, "segdiff", "package-sources"), nil
}

// verifySources reads every archive of sourcePackages from dir and checks it
// against dir's SHA256SUMS, before anything is unpacked. Each error is one
// line naming the file.
func verifySources(dir string) ([]verifiedArchive, error) {
	sumsPath := filepath.Join(dir, SourcesSumsFile)
	sums, err := readSums(sumsPath)
	if err != nil {
		return nil, err
	}
	out := make([]verifiedArchive, 0, len(sourcePackages))
	for _, sp := range sourcePackages {
		want, ok := sums[sp.archive]
		if !ok {
			return nil, fmt.Errorf("package sources: %s lists no sum for %s", sumsPath, sp.archive)
		}
		path := filepath.Join(dir, sp.archive)
		data, err := os.ReadFile(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("package sources: %s is missing (%s lists it)", path, SourcesSumsFile)
			}
			return nil, fmt.Errorf("package sources: %w", err)
		}
		h := sha256.Sum256(data)
		if got := hex.EncodeToString(h[:]); got != want {
			return nil, fmt.Errorf("package sources: %s has sha256 %s, %s says %s", path, got, SourcesSumsFile, want)
		}
		commit, err := archiveCommit(data)
		if err != nil {
			return nil, fmt.Errorf("package sources: %s: %w", path, err)
		}
		out = append(out, verifiedArchive{pkg: sp, sum: want, data: data, commit: commit})
	}
	return out, nil
}

// readSums parses sha256sum output: "<64 hex>  <name>" (or " *<name>" for
// binary mode) per line; blank lines and # comments are skipped.
func readSums(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("package sources: %w", err)
	}
	sums := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sum, name, ok := strings.Cut(line, " ")
		name = strings.TrimPrefix(strings.TrimLeft(name, " "), "*")
		if _, err := hex.DecodeString(sum); !ok || err != nil || len(sum) != 64 || name == "" {
			return nil, fmt.Errorf("package sources: %s:%d: want \"<sha256 hex>  <file>\", got %q", path, n, line)
		}
		sums[name] = strings.ToLower(sum)
	}
	return sums, sc.Err()
}

var commitRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

// archiveCommit returns the commit `git archive` records in a tarball's pax
// global header ("comment"), "" when there is none.
func archiveCommit(data []byte) (string, error) {
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return "", fmt.Errorf("not a gzip archive: %w", err)
	}
	defer gz.Close()
	h, err := tar.NewReader(gz).Next()
	if err != nil {
		return "", fmt.Errorf("not a tar archive: %w", err)
	}
	if c := h.PAXRecords["comment"]; h.Typeflag == tar.TypeXGlobalHeader && commitRE.MatchString(c) {
		return c, nil
	}
	return "", nil
}

// pinRE finds "github.com/<org>/<repo>[/<file>]@<ref>" locators in main.star.
var pinRE = regexp.MustCompile(`"(github\.com/[^/"@]+/[^/"@]+)(?:/[^"@]*)?@([0-9a-f]{7,40})"`)

// wrapperPins returns the commit the wrapper package pins each remote
// package at: kurtosis.yml's replace values ("<id>@<commit>") and the
// "@<commit>" locators of main.star.
func wrapperPins(pkgDir string) (map[string]string, error) {
	k, err := readKurtosisYAML(filepath.Join(pkgDir, "kurtosis.yml"))
	if err != nil {
		return nil, err
	}
	pins := map[string]string{}
	for id, to := range k.Replace {
		if name, ref, ok := strings.Cut(to, "@"); ok && name == id {
			pins[id] = ref
		}
	}
	main, err := os.ReadFile(filepath.Join(pkgDir, "main.star"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("package %s: %w", pkgDir, err)
	}
	for _, m := range pinRE.FindAllStringSubmatch(string(main), -1) {
		if _, ok := pins[m[1]]; !ok {
			pins[m[1]] = m[2]
		}
	}
	return pins, nil
}

// unpackSources returns the staging directory for archives under cache:
// cache/<key>, key a hash of the archives' sums and stagingFormat. An
// existing complete one is reused. Otherwise the archives are unpacked into
// a temporary directory beside it, which is renamed into place only once
// complete, so no run ever sees a half-unpacked tree; a concurrent run that
// renamed first wins and its tree is used.
func unpackSources(ctx context.Context, cache string, archives []verifiedArchive) (dir string, reused bool, err error) {
	manifest := sourcesManifest(archives)
	key := sha256.Sum256([]byte(manifest))
	dir = filepath.Join(cache, hex.EncodeToString(key[:12]))
	if complete(dir, manifest) {
		return dir, true, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", false, fmt.Errorf("package sources cache: %w", err)
	}
	if _, err := os.Stat(dir); err == nil {
		// Not a tree unpackSources made (those appear whole, by rename):
		// remove it and unpack afresh rather than trust any of it.
		if err := os.RemoveAll(dir); err != nil {
			return "", false, fmt.Errorf("package sources cache: remove incomplete %s: %w", dir, err)
		}
	}
	tmp, err := os.MkdirTemp(cache, ".unpacking-")
	if err != nil {
		return "", false, fmt.Errorf("package sources cache: %w", err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	for _, a := range archives {
		if err := ctx.Err(); err != nil {
			return "", false, fmt.Errorf("unpack package sources: %w", err)
		}
		if err := unpackArchive(a.data, tmp, a.pkg.dir); err != nil {
			return "", false, fmt.Errorf("package sources: unpack %s: %w", a.pkg.archive, err)
		}
		name, err := packageName(filepath.Join(tmp, a.pkg.dir))
		if err != nil {
			return "", false, fmt.Errorf("package sources: %s: %w", a.pkg.archive, err)
		}
		if name != a.pkg.id {
			return "", false, fmt.Errorf("package sources: %s holds package %q, want %q", a.pkg.archive, name, a.pkg.id)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, stagingManifest), []byte(manifest), 0o644); err != nil {
		return "", false, fmt.Errorf("package sources cache: %w", err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp made it 0700
		return "", false, fmt.Errorf("package sources cache: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if complete(dir, manifest) { // another run renamed its copy first
			return dir, true, nil
		}
		return "", false, fmt.Errorf("package sources cache: %w", err)
	}
	return dir, false, nil
}

// sourcesManifest is the content of a staging directory's SOURCES file.
func sourcesManifest(archives []verifiedArchive) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: unpacked by `segdiff devnet up --package-sources`; safe to delete\n", stagingFormat)
	for _, a := range archives {
		fmt.Fprintf(&b, "%s  %s\n", a.sum, a.pkg.archive)
	}
	return b.String()
}

// complete reports whether dir is a staging directory unpacked from the
// archives manifest lists.
func complete(dir, manifest string) bool {
	got, err := os.ReadFile(filepath.Join(dir, stagingManifest))
	if err != nil || string(got) != manifest {
		return false
	}
	for _, sp := range sourcePackages {
		if _, err := os.Stat(filepath.Join(dir, sp.dir, "kurtosis.yml")); err != nil {
			return false
		}
	}
	return true
}

// unpackArchive extracts a gzipped tarball whose entries all lie under top/
// into dest. Directories and regular files are written; links are skipped
// (Kurtosis drops them from uploaded packages too); other entries, and
// entries outside top/, are errors.
func unpackArchive(data []byte, dest, top string) error {
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return err
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if name != top && !strings.HasPrefix(name, top+"/") {
			return fmt.Errorf("entry %q lies outside %s/", h.Name, top)
		}
		target := filepath.Join(dest, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := writeFileFrom(target, tr, fileMode(h.FileInfo().Mode())); err != nil {
				return err
			}
		case tar.TypeSymlink, tar.TypeLink:
		default:
			return fmt.Errorf("entry %q: unsupported type %q", h.Name, string(h.Typeflag))
		}
	}
	if fi, err := os.Stat(filepath.Join(dest, top)); err != nil || !fi.IsDir() {
		return fmt.Errorf("no %s/ folder in the archive", top)
	}
	return nil
}

// fileMode keeps only whether a file is executable.
func fileMode(m fs.FileMode) fs.FileMode {
	if m&0o111 != 0 {
		return 0o755
	}
	return 0o644
}

func writeFileFrom(path string, r io.Reader, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// kurtosisYAML is a package's kurtosis.yml: the keys the SDK accepts
// (it parses strictly, so any other key is an error there too).
type kurtosisYAML struct {
	Name        string            `yaml:"name"`
	Description string            `yaml:"description,omitempty"`
	Replace     map[string]string `yaml:"replace,omitempty"`
}

func readKurtosisYAML(path string) (*kurtosisYAML, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read package: %w", err)
	}
	k, err := parseKurtosisYAML(data)
	if err != nil {
		return nil, fmt.Errorf("read package: %s: %w", path, err)
	}
	return k, nil
}

func parseKurtosisYAML(data []byte) (*kurtosisYAML, error) {
	var k kurtosisYAML
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&k); err != nil {
		return nil, err
	}
	if k.Name == "" {
		return nil, errors.New("no name")
	}
	return &k, nil
}

// packageName is the name in dir/kurtosis.yml.
func packageName(dir string) (string, error) {
	k, err := readKurtosisYAML(filepath.Join(dir, "kurtosis.yml"))
	if err != nil {
		return "", err
	}
	return k.Name, nil
}

// stagedKurtosisYAML is the wrapper's kurtosis.yml with every package of
// local replaced by its local path (absolute, so the SDK uploads that
// directory under the package's id); the name, the description and any
// other replace are kept.
func stagedKurtosisYAML(orig []byte, local map[string]string, header string) ([]byte, error) {
	k, err := parseKurtosisYAML(orig)
	if err != nil {
		return nil, err
	}
	if k.Replace == nil {
		k.Replace = map[string]string{}
	}
	for id, dir := range local {
		if !filepath.IsAbs(dir) {
			return nil, fmt.Errorf("replace %s: %q is not an absolute path", id, dir)
		}
		k.Replace[id] = dir
	}
	body, err := yaml.Marshal(k) // map keys sorted: the output is stable
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	for _, line := range strings.Split(strings.TrimRight(header, "\n"), "\n") {
		b.WriteString("# " + line + "\n")
	}
	b.Write(body)
	return b.Bytes(), nil
}

// stageWrapper copies pkgDir into a new temporary directory and rewrites the
// copy's kurtosis.yml with stagedKurtosisYAML. The committed files are only
// read.
func stageWrapper(pkgDir string, local map[string]string, sourcesDir string) (string, error) {
	absPkg, err := filepath.Abs(pkgDir)
	if err != nil {
		return "", fmt.Errorf("stage package %s: %w", pkgDir, err)
	}
	orig, err := os.ReadFile(filepath.Join(absPkg, "kurtosis.yml"))
	if err != nil {
		return "", fmt.Errorf("stage package: %w", err)
	}
	header := fmt.Sprintf("Staged by `segdiff devnet up --package-sources %s` from\n%s:\n"+
		"ethereum-package and the packages it imports are replaced by the trees\nunpacked from those archives (checked against %s).",
		sourcesDir, filepath.Join(absPkg, "kurtosis.yml"), SourcesSumsFile)
	staged, err := stagedKurtosisYAML(orig, local, header)
	if err != nil {
		return "", fmt.Errorf("stage package: %s: %w", filepath.Join(absPkg, "kurtosis.yml"), err)
	}
	dir, err := os.MkdirTemp("", "segdiff-package-")
	if err != nil {
		return "", fmt.Errorf("stage package: %w", err)
	}
	if err := copyTree(absPkg, dir); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("stage package %s: %w", pkgDir, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kurtosis.yml"), staged, 0o644); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("stage package: %w", err)
	}
	return dir, nil
}

// copyTree copies the directories and regular files under src into dst
// (which exists); anything else is an error naming it.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			return writeFileFrom(target, f, fileMode(info.Mode()))
		}
		return fmt.Errorf("%s: not a regular file or directory (%v)", path, d.Type())
	})
}
