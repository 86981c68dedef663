package kurtosis_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/segdiff/segdiff/internal/devnet/kurtosis"
	"github.com/segdiff/segdiff/internal/devnet/kurtosis/kurtosistest"
)

// repoPackage is the repository's own wrapper package, kurtosis/.
var repoPackage = filepath.Join("..", "..", "..", "kurtosis")

// stagedYAML is a staged kurtosis.yml as the SDK reads it.
type stagedYAML struct {
	Name        string            `yaml:"name"`
	Description string            `yaml:"description"`
	Replace     map[string]string `yaml:"replace"`
}

func parseStaged(t *testing.T, data []byte) stagedYAML {
	t.Helper()
	var k stagedYAML
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true) // the SDK parses kurtosis.yml strictly
	if err := dec.Decode(&k); err != nil {
		t.Fatalf("staged kurtosis.yml does not parse: %v\n%s", err, data)
	}
	return k
}

// packageFiles reads every file under dir (relative slash path → content).
func packageFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func stage(t *testing.T, pkg, sources, cache string, log *syncBuffer) (string, func(), error) {
	t.Helper()
	return kurtosis.StageSources(context.Background(), kurtosis.WithEnclave("x"), kurtosis.WithPackageDir(pkg),
		kurtosis.WithPackageSources(sources), kurtosis.WithSourcesCache(cache), kurtosis.WithLog(log))
}

// TestStageSourcesKurtosisYAML: the staged copy of the committed package
// replaces exactly the five packages by absolute paths of their unpacked
// trees, keeps name and description, carries every other file unchanged,
// and the committed package is left as it was.
func TestStageSourcesKurtosisYAML(t *testing.T) {
	before := packageFiles(t, repoPackage)
	committed := packageFiles(t, repoPackage)
	cache := t.TempDir()
	log := &syncBuffer{}
	dir, cleanup, err := stage(t, repoPackage, kurtosistest.WriteSources(t, nil), cache, log)
	if err != nil {
		t.Fatalf("stage: %v", err)
	}
	staged := packageFiles(t, dir)
	orig := parseStaged(t, committed["kurtosis.yml"])
	k := parseStaged(t, staged["kurtosis.yml"])
	if k.Name != orig.Name || k.Description != orig.Description {
		t.Errorf("staged name/description = %q/%q, want the committed %q/%q", k.Name, k.Description, orig.Name, orig.Description)
	}
	entries, err := os.ReadDir(cache)
	if err != nil || len(entries) != 1 {
		t.Fatalf("cache holds %v (%v), want one staging directory", entries, err)
	}
	tree := filepath.Join(cache, entries[0].Name())
	want := map[string]string{}
	for _, sp := range kurtosistest.SourcePackages {
		want[sp.ID] = filepath.Join(tree, sp.Dir)
		got, err := os.ReadFile(filepath.Join(tree, sp.Dir, "kurtosis.yml"))
		if err != nil || !strings.Contains(string(got), sp.ID) {
			t.Errorf("%s: unpacked kurtosis.yml %q, %v", sp.Dir, got, err)
		}
		if _, err := os.Stat(filepath.Join(tree, sp.Dir, "src", "lib", "helper.star")); err != nil {
			t.Errorf("%s: nested file not unpacked: %v", sp.Dir, err)
		}
	}
	if !reflect.DeepEqual(k.Replace, want) {
		t.Errorf("staged replace =\n%v\nwant\n%v", k.Replace, want)
	}
	for id, path := range k.Replace {
		if !filepath.IsAbs(path) {
			t.Errorf("replace %s: %q is not absolute (the SDK resolves a relative one against the staged copy)", id, path)
		}
	}
	delete(staged, "kurtosis.yml")
	delete(committed, "kurtosis.yml")
	if !reflect.DeepEqual(staged, committed) {
		t.Errorf("staged copy differs from the committed package beyond kurtosis.yml: %v vs %v", keys(staged), keys(committed))
	}
	if after := packageFiles(t, repoPackage); !reflect.DeepEqual(after, before) {
		t.Error("staging changed the committed package")
	}
	if !strings.Contains(log.String(), "unpacked into "+tree) {
		t.Errorf("log:\n%s", log)
	}
	cleanup()
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("cleanup left the staged copy %s: %v", dir, err)
	}
	if _, err := os.Stat(tree); err != nil {
		t.Errorf("cleanup removed the unpacked tree: %v", err)
	}
}

func keys(m map[string][]byte) []string {
	return slices.Sorted(maps.Keys(m))
}

// TestStageSourcesReusesTree: a second run with the same archives neither
// unpacks again nor leaves anything but the one tree in the cache.
func TestStageSourcesReusesTree(t *testing.T) {
	sources, cache := kurtosistest.WriteSources(t, nil), t.TempDir()
	log := &syncBuffer{}
	_, cleanup, err := stage(t, repoPackage, sources, cache, log)
	if err != nil {
		t.Fatal(err)
	}
	cleanup()
	entries, _ := os.ReadDir(cache)
	if len(entries) != 1 {
		t.Fatalf("cache after the first run: %v", entries)
	}
	tree := filepath.Join(cache, entries[0].Name())
	marker := filepath.Join(tree, "ethereum-package", "marker")
	if err := os.WriteFile(marker, []byte("first run"), 0o644); err != nil {
		t.Fatal(err)
	}
	log2 := &syncBuffer{}
	dir, cleanup, err := stage(t, repoPackage, sources, cache, log2)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if !strings.Contains(log2.String(), "reusing "+tree) {
		t.Errorf("second run's log does not say it reused %s:\n%s", tree, log2)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("second run unpacked again (the marker is gone): %v", err)
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 1 {
		t.Errorf("cache after the second run: %v", entries)
	}
	k := parseStaged(t, packageFiles(t, dir)["kurtosis.yml"])
	if got := k.Replace["github.com/ethpandaops/ethereum-package"]; got != filepath.Join(tree, "ethereum-package") {
		t.Errorf("second run replaces ethereum-package by %q", got)
	}

	// Other archives, another tree.
	changed := kurtosistest.WriteSources(t, func(sp *kurtosistest.SourcePackage, files map[string]string) {
		files["main.star"] += "# changed\n"
	})
	_, cleanup3, err := stage(t, repoPackage, changed, cache, &syncBuffer{})
	if err != nil {
		t.Fatal(err)
	}
	cleanup3()
	if entries, _ := os.ReadDir(cache); len(entries) != 2 {
		t.Errorf("cache after archives changed: %v, want two trees", entries)
	}
}

// TestStageSourcesConcurrent: two runs unpacking at once both end with the
// same complete tree.
func TestStageSourcesConcurrent(t *testing.T) {
	sources, cache := kurtosistest.WriteSources(t, nil), t.TempDir()
	var wg sync.WaitGroup
	dirs := make([]string, 4)
	errs := make([]error, 4)
	for i := range dirs {
		wg.Go(func() {
			dir, cleanup, err := stage(t, repoPackage, sources, cache, &syncBuffer{})
			if err == nil {
				dirs[i] = parseStaged(t, packageFiles(t, dir)["kurtosis.yml"]).Replace["github.com/kurtosis-tech/redis-package"]
				cleanup()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("run %d: %v", i, err)
		}
		if dirs[i] != dirs[0] {
			t.Errorf("run %d replaces redis-package by %q, run 0 by %q", i, dirs[i], dirs[0])
		}
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 1 {
		t.Errorf("cache: %v, want one tree and no partial ones", entries)
	}
}

// TestUpPackageSourcesRejectsBeforeConnecting: every archive is checked
// before anything is unpacked or any engine is asked; the error is one line
// naming the file.
func TestUpPackageSourcesRejectsBeforeConnecting(t *testing.T) {
	tests := []struct {
		name    string
		sources func(t *testing.T) string
		wantMsg []string
	}{
		{name: "bad archive hash", sources: func(t *testing.T) string {
			dir := kurtosistest.WriteSources(t, nil)
			data := kurtosistest.Archive(t, "redis-package", map[string]string{"kurtosis.yml": "name: tampered\n"}, "")
			if err := os.WriteFile(filepath.Join(dir, "redis-package.tar.gz"), data, 0o644); err != nil {
				t.Fatal(err)
			}
			return dir
		}, wantMsg: []string{"redis-package.tar.gz has sha256 ", "SHA256SUMS says "}},
		{name: "missing archive", sources: func(t *testing.T) string {
			dir := kurtosistest.WriteSources(t, nil)
			if err := os.Remove(filepath.Join(dir, "db-adminer-package.tar.gz")); err != nil {
				t.Fatal(err)
			}
			return dir
		}, wantMsg: []string{"db-adminer-package.tar.gz is missing"}},
		{name: "archive not in SHA256SUMS", sources: func(t *testing.T) string {
			dir := kurtosistest.WriteSources(t, nil)
			sums, _ := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
			var kept []string
			for _, l := range strings.Split(string(sums), "\n") {
				if !strings.Contains(l, "prometheus-package") {
					kept = append(kept, l)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(strings.Join(kept, "\n")), 0o644); err != nil {
				t.Fatal(err)
			}
			return dir
		}, wantMsg: []string{"lists no sum for prometheus-package.tar.gz"}},
		{name: "no SHA256SUMS", sources: func(t *testing.T) string {
			dir := kurtosistest.WriteSources(t, nil)
			if err := os.Remove(filepath.Join(dir, "SHA256SUMS")); err != nil {
				t.Fatal(err)
			}
			return dir
		}, wantMsg: []string{"SHA256SUMS: no such file"}},
		{name: "malformed SHA256SUMS", sources: func(t *testing.T) string {
			dir := kurtosistest.WriteSources(t, nil)
			if err := os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte("not a sum line\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return dir
		}, wantMsg: []string{"SHA256SUMS:1: want"}},
		{name: "archive of another commit than the pin", sources: func(t *testing.T) string {
			return kurtosistest.WriteSources(t, func(sp *kurtosistest.SourcePackage, _ map[string]string) {
				if sp.Dir == "postgres-package" {
					sp.Commit = "1111111111111111111111111111111111111111"
				}
			})
		}, wantMsg: []string{"postgres-package.tar.gz holds github.com/kurtosis-tech/postgres-package at commit 1111111111111111111111111111111111111111",
			"pins github.com/kurtosis-tech/postgres-package@9c18603a90602d29fe5872d6f4693a5b6a280d15"}},
		{name: "archive of another package", sources: func(t *testing.T) string {
			return kurtosistest.WriteSources(t, func(sp *kurtosistest.SourcePackage, files map[string]string) {
				if sp.Dir == "redis-package" {
					files["kurtosis.yml"] = "name: github.com/someone/else\n"
				}
			})
		}, wantMsg: []string{`redis-package.tar.gz holds package "github.com/someone/else"`}},
		{name: "archive that is not a tarball", sources: func(t *testing.T) string {
			dir := kurtosistest.WriteSources(t, nil)
			if err := os.WriteFile(filepath.Join(dir, "ethereum-package.tar.gz"), []byte("not gzip"), 0o644); err != nil {
				t.Fatal(err)
			}
			kurtosistest.WriteSums(t, dir)
			return dir
		}, wantMsg: []string{"ethereum-package.tar.gz: not a gzip archive"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cache := filepath.Join(t.TempDir(), "cache")
			log := &syncBuffer{}
			p := append(upParams(t, "x", repoPackage, writeFile(t, "p.yaml", testParams), t.TempDir(), log),
				kurtosis.WithPackageSources(tt.sources(t)), kurtosis.WithSourcesCache(cache))
			_, err := kurtosis.Up(context.Background(), p...)
			if err == nil {
				t.Fatal("Up succeeded")
			}
			if errors.Is(err, kurtosis.ErrNoEngine) {
				t.Errorf("Up got as far as the engine: %v", err)
			}
			for _, want := range tt.wantMsg {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Up error = %q, want it to contain %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
			if entries, _ := os.ReadDir(cache); len(entries) != 0 {
				t.Errorf("the cache holds %v after a rejected archive", entries)
			}
		})
	}
}

// TestStageSourcesFailedUnpackLeavesNothing: an archive that passes its
// checksum but breaks mid-way leaves neither a tree nor a partial one.
func TestStageSourcesFailedUnpackLeavesNothing(t *testing.T) {
	sources := kurtosistest.WriteSources(t, nil)
	good, err := os.ReadFile(filepath.Join(sources, "prometheus-package.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	// A valid gzip header, then the stream is cut.
	if err := os.WriteFile(filepath.Join(sources, "prometheus-package.tar.gz"), good[:len(good)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	kurtosistest.WriteSums(t, sources)
	cache := t.TempDir()
	if _, _, err := stage(t, repoPackage, sources, cache, &syncBuffer{}); err == nil || !strings.Contains(err.Error(), "prometheus-package.tar.gz") {
		t.Fatalf("stage error = %v, want one naming prometheus-package.tar.gz", err)
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 0 {
		t.Errorf("a failed unpack left %v in the cache", entries)
	}
}

func TestUnpackArchive(t *testing.T) {
	t.Run("links are skipped", func(t *testing.T) {
		dest := t.TempDir()
		data := kurtosistest.Archive(t, "pkg", map[string]string{"kurtosis.yml": "name: x\n", ".agents/skills/s": "->../../.claude/skills/s"}, "")
		if err := kurtosis.UnpackArchive(data, dest, "pkg"); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(filepath.Join(dest, "pkg", ".agents", "skills", "s")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("link unpacked: %v", err)
		}
	})
	t.Run("entries outside the folder are refused", func(t *testing.T) {
		data := kurtosistest.Archive(t, "other", map[string]string{"x": "x"}, "")
		if err := kurtosis.UnpackArchive(data, t.TempDir(), "pkg"); err == nil || !strings.Contains(err.Error(), "outside pkg/") {
			t.Errorf("UnpackArchive = %v", err)
		}
		data = kurtosistest.Archive(t, "pkg/../../escape", map[string]string{"x": "x"}, "")
		if err := kurtosis.UnpackArchive(data, t.TempDir(), "pkg"); err == nil || !strings.Contains(err.Error(), "outside pkg/") {
			t.Errorf("UnpackArchive of ../ = %v", err)
		}
	})
}

// TestUpPackageSources runs the committed package from local sources
// through the unmodified SDK: it uploads the staged wrapper and, as the
// staged replace says, each of the five unpacked packages under its id.
func TestUpPackageSources(t *testing.T) {
	eng := kurtosistest.Start(t)
	eng.APIC.Script(kurtosistest.EndEOF, successScript(t)...)
	addServices(eng.APIC)
	committed := packageFiles(t, repoPackage)
	sources, cache := kurtosistest.WriteSources(t, nil), t.TempDir()
	log := &syncBuffer{}
	p := append(upParams(t, "local", repoPackage, writeFile(t, "p.yaml", testParams), t.TempDir(), log),
		kurtosis.WithPackageSources(sources), kurtosis.WithSourcesCache(cache))
	if _, err := kurtosis.Up(context.Background(), p...); err != nil {
		t.Fatalf("Up: %v\nlog:\n%s", err, log)
	}
	want := []string{"github.com/segdiff/segdiff/kurtosis"}
	for _, sp := range kurtosistest.SourcePackages {
		want = append(want, sp.ID)
		files := eng.APIC.Uploaded(sp.ID)
		if !strings.Contains(string(files["kurtosis.yml"]), sp.ID) || files["src/lib/helper.star"] == nil {
			t.Errorf("upload of %s: files %v", sp.ID, kurtosistest.SortedFiles(files))
		}
	}
	if got := eng.APIC.Uploads(); !reflect.DeepEqual(sorted(got), sorted(want)) {
		t.Errorf("uploads = %v, want %v", got, want)
	}
	id, files := eng.APIC.Package()
	if id != "github.com/segdiff/segdiff/kurtosis" || eng.APIC.RunArgs().GetPackageId() != id {
		t.Errorf("ran %q", eng.APIC.RunArgs().GetPackageId())
	}
	k := parseStaged(t, files["kurtosis.yml"])
	for _, sp := range kurtosistest.SourcePackages {
		if path := k.Replace[sp.ID]; !filepath.IsAbs(path) || !strings.HasPrefix(path, cache) {
			t.Errorf("uploaded kurtosis.yml replaces %s by %q, want a path under %s", sp.ID, path, cache)
		}
	}
	if !bytes.Equal(files["main.star"], committed["main.star"]) {
		t.Error("uploaded main.star differs from the committed one")
	}
	if after := packageFiles(t, repoPackage); !reflect.DeepEqual(after, committed) {
		t.Error("Up changed the committed package")
	}
	if left, _ := filepath.Glob(filepath.Join(os.TempDir(), "segdiff-package-*")); len(left) != 0 {
		t.Errorf("staged copies left behind: %v", left)
	}
}

// TestUpRealPackageSources stages the real archives (SEGDIFF_PACKAGE_SOURCES,
// e.g. /work/shared/upstream) and uploads them to the fake engine.
func TestUpRealPackageSources(t *testing.T) {
	sources := os.Getenv(kurtosis.EnvPackageSources)
	if sources == "" {
		t.Skipf("%s is not set", kurtosis.EnvPackageSources)
	}
	eng := kurtosistest.Start(t)
	eng.APIC.Script(kurtosistest.EndEOF, successScript(t)...)
	addServices(eng.APIC)
	log := &syncBuffer{}
	p := append(upParams(t, "real", repoPackage, writeFile(t, "p.yaml", testParams), t.TempDir(), log),
		kurtosis.WithPackageSources(sources), kurtosis.WithSourcesCache(t.TempDir()))
	if _, err := kurtosis.Up(context.Background(), p...); err != nil {
		t.Fatalf("Up: %v\nlog:\n%s", err, log)
	}
	for _, sp := range kurtosistest.SourcePackages {
		files := eng.APIC.Uploaded(sp.ID)
		if files["kurtosis.yml"] == nil || files["main.star"] == nil && sp.Dir != "db-adminer-package" {
			t.Errorf("upload of %s: %d files, no kurtosis.yml or main.star", sp.ID, len(files))
		}
	}
	t.Logf("uploads: %v\n%s", eng.APIC.Uploads(), log)
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
