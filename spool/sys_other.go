//go:build !unix

package spool

import (
	"errors"
	"io/fs"
	"os"
)

func tryLock(*os.File, bool) (bool, error) {
	return false, errors.New("file locking is not available on this platform")
}

func unlock(*os.File) {}

type fileID struct {
	dev, ino uint64
	nlink    uint64
}

func idOf(fs.FileInfo) (fileID, bool) { return fileID{}, false }

func linkUnsupported(error) bool { return true }

func writableDir(string) error { return nil }
