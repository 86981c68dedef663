package kurtosistest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// SourcePackage is one package `segdiff devnet up --package-sources` makes
// local, as WriteSources writes it.
type SourcePackage struct {
	// ID is the package's name; Archive unpacks to Dir/.
	ID, Archive, Dir string
	// Commit is what the archive's pax global header records, as `git
	// archive` does ("" for none): the commit kurtosis/ pins.
	Commit string
}

// SourcePackages are the five packages, at the commits the repository's
// kurtosis/ package pins; ethereum-package's archive, like the one in the
// upstream snapshots, records no commit.
var SourcePackages = []SourcePackage{
	{ID: "github.com/ethpandaops/ethereum-package", Archive: "ethereum-package.tar.gz", Dir: "ethereum-package"},
	{ID: "github.com/kurtosis-tech/postgres-package", Archive: "postgres-package.tar.gz", Dir: "postgres-package", Commit: "9c18603a90602d29fe5872d6f4693a5b6a280d15"},
	{ID: "github.com/kurtosis-tech/redis-package", Archive: "redis-package.tar.gz", Dir: "redis-package", Commit: "096ea1284062fd8b4e26845306b6681c4ed6dfe5"},
	{ID: "github.com/kurtosis-tech/prometheus-package", Archive: "prometheus-package.tar.gz", Dir: "prometheus-package", Commit: "a6e028b2f16fdc263e369e562756edd115f2740f"},
	{ID: "github.com/bharath-123/db-adminer-package", Archive: "db-adminer-package.tar.gz", Dir: "db-adminer-package", Commit: "d75d4628ea04dfe47dcb8aa20c61c6b68c0a2422"},
}

// SourceFiles are the files of a stand-in package: its kurtosis.yml and a
// main.star (path relative to the package folder → content).
func SourceFiles(sp SourcePackage) map[string]string {
	return map[string]string{
		"kurtosis.yml":        fmt.Sprintf("name: %q\n", sp.ID),
		"main.star":           "def run(plan, args={}):\n    return struct()\n",
		"src/lib/helper.star": "def helper():\n    return 1\n",
	}
}

// WriteSources writes the stand-in archives of SourcePackages and their
// SHA256SUMS into a new directory and returns it. edit, when not nil, may
// change each package's files (or its SourcePackage, e.g. the commit)
// before it is archived.
func WriteSources(t testing.TB, edit func(sp *SourcePackage, files map[string]string)) string {
	t.Helper()
	dir := t.TempDir()
	for _, sp := range SourcePackages {
		files := SourceFiles(sp)
		if edit != nil {
			edit(&sp, files)
		}
		if err := os.WriteFile(filepath.Join(dir, sp.Archive), Archive(t, sp.Dir, files, sp.Commit), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	WriteSums(t, dir)
	return dir
}

// Archive returns a gzipped tarball of files under top/, as `git archive
// --prefix=top/` makes it: a pax global header carrying commit (when not
// ""), then the directories and files. A value starting with "->" is a
// symbolic link to the rest.
func Archive(t testing.TB, top string, files map[string]string, commit string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	mtime := time.Date(2026, 8, 13, 0, 0, 0, 0, time.UTC)
	write := func(h *tar.Header, body string) {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if commit != "" {
		write(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": commit}}, "")
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	dirs := map[string]bool{}
	write(&tar.Header{Typeflag: tar.TypeDir, Name: top + "/", Mode: 0o775, ModTime: mtime}, "")
	for _, name := range names {
		for d := filepath.Dir(name); d != "."; d = filepath.Dir(d) {
			if !dirs[d] {
				dirs[d] = true
				write(&tar.Header{Typeflag: tar.TypeDir, Name: top + "/" + d + "/", Mode: 0o775, ModTime: mtime}, "")
			}
		}
		body := files[name]
		if target, ok := strings.CutPrefix(body, "->"); ok {
			write(&tar.Header{Typeflag: tar.TypeSymlink, Name: top + "/" + name, Linkname: target, Mode: 0o777, ModTime: mtime}, "")
			continue
		}
		write(&tar.Header{Typeflag: tar.TypeReg, Name: top + "/" + name, Mode: 0o664, Size: int64(len(body)), ModTime: mtime}, body)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// WriteSums (re)writes dir/SHA256SUMS for every *.tar.gz in dir, in
// sha256sum's format.
func WriteSums(t testing.TB, dir string) {
	t.Helper()
	archives, err := filepath.Glob(filepath.Join(dir, "*.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(archives)
	var b strings.Builder
	for _, path := range archives {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(data)
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(h[:]), filepath.Base(path))
	}
	if err := os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
