// Package atomicfile writes files so that a reader sees the old content or
// the new, never part of either, and a failed write leaves nothing behind:
// Write is github.com/google/renameio's pending file, pinned to a temporary
// file in the target's own directory.
package atomicfile

import (
	"os"
	"path/filepath"

	"github.com/google/renameio/v2"
)

// Write writes data to path through a uniquely named temporary file in
// path's directory: written, fsynced, then renamed over path. The file gets
// perm less the umask, whether new or replacing one (os.WriteFile would
// keep a replaced file's mode). On any failure the temporary file is
// removed and path is as it was. Concurrent writers of one path each
// replace it whole; the last rename wins.
func Write(path string, data []byte, perm os.FileMode) error {
	// WithTempDir: renameio would otherwise try $TMPDIR first, probing it
	// with files of its own, and place the temporary file there.
	// No WithExistingPermissions: its chmod is the one step after the
	// temporary file exists that Cleanup would not undo.
	f, err := renameio.NewPendingFile(path, renameio.WithTempDir(filepath.Dir(path)), renameio.WithPermissions(perm))
	if err != nil {
		return err
	}
	defer f.Cleanup() // removes the temporary file unless the rename happened
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.CloseAtomicallyReplace()
}

// Symlink points the symbolic link path at target, replacing an existing
// link atomically (through a temporary link in path's directory).
func Symlink(target, path string) error { return renameio.Symlink(target, path) }
