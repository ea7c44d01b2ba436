//go:build !unix

package spool

import (
	"io/fs"
)

type fileID struct {
	dev, ino uint64
	nlink    uint64
}

func idOf(fs.FileInfo) (fileID, bool) { return fileID{}, false }

func linkUnsupported(error) bool { return true }

func writableDir(string) error { return nil }
