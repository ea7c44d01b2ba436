//go:build !unix

package file

import (
	"errors"
	"io/fs"
	"os"
)

func inode(fs.FileInfo) uint64 { return 0 }

func tryLock(*os.File, bool) (bool, error) {
	return false, errors.New("file locking is not available on this platform")
}

func unlock(*os.File) {}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
