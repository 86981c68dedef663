package atomicfile_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"

	"github.com/segdiff/segdiff/internal/atomicfile"
)

// entries lists dir's names, sorted.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

func TestWrite(t *testing.T) {
	umask := syscall.Umask(0)
	syscall.Umask(umask)
	tests := []struct {
		name    string
		setup   func(t *testing.T, path string) // what exists at path before
		perm    os.FileMode
		want    string
		wantErr bool
	}{
		{name: "new file", perm: 0o644, want: "new"},
		{name: "replaces a file and its mode", perm: 0o644, want: "new", setup: func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("old content, longer"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a directory in the way", perm: 0o644, wantErr: true, setup: func(t *testing.T, path string) {
			if err := os.MkdirAll(filepath.Join(path, "child"), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.json")
			if tt.setup != nil {
				tt.setup(t, path)
			}
			err := atomicfile.Write(path, []byte("new"), tt.perm)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Write: %v, wantErr %v", err, tt.wantErr)
			}
			if got := entries(t, dir); !slices.Equal(got, []string{"out.json"}) {
				t.Errorf("directory holds %v, want only out.json", got)
			}
			if tt.wantErr {
				return
			}
			b, err := os.ReadFile(path)
			if err != nil || string(b) != tt.want {
				t.Errorf("content %q, %v; want %q", b, err, tt.want)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if want := tt.perm &^ os.FileMode(umask); fi.Mode().Perm() != want {
				t.Errorf("mode %v, want %v", fi.Mode().Perm(), want)
			}
		})
	}
}

func TestWriteMissingDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := atomicfile.Write(filepath.Join(dir, "absent", "out.json"), []byte("x"), 0o644); err == nil {
		t.Fatal("Write into a missing directory succeeded")
	}
	if got := entries(t, dir); len(got) != 0 {
		t.Errorf("directory holds %v, want nothing", got)
	}
}

// TestWriteConcurrent: writers of one path never collide on a temporary
// name; the file is one writer's content whole, and nothing else is left.
func TestWriteConcurrent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	contents := map[string]bool{}
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		data := fmt.Sprintf("writer %d %s", i, string(make([]byte, 64<<10)))
		contents[data] = true
		wg.Go(func() { errs[i] = atomicfile.Write(path, []byte(data), 0o644) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil || !contents[string(b)] {
		t.Errorf("content is no writer's whole content (%d bytes, %v)", len(b), err)
	}
	if got := entries(t, dir); !slices.Equal(got, []string{"out.json"}) {
		t.Errorf("directory holds %v, want only out.json", got)
	}
}

func TestSymlink(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "latest")
	for _, target := range []string{"run-1", "run-2"} {
		if err := atomicfile.Symlink(target, link); err != nil {
			t.Fatalf("Symlink(%s): %v", target, err)
		}
		if got, err := os.Readlink(link); err != nil || got != target {
			t.Errorf("latest -> %q, %v; want %q", got, err, target)
		}
	}
	if got := entries(t, dir); !slices.Equal(got, []string{"latest"}) {
		t.Errorf("directory holds %v, want only latest", got)
	}
}
