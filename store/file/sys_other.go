//go:build !unix

package file

import (
	"errors"
	"io/fs"
)

func inode(fs.FileInfo) uint64 { return 0 }

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
