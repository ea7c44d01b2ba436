package file

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/wharfdata/wharf/store/driver"
)

// A local path names a place in the local filesystem, the same whatever the command and
// whichever of its three spellings is used (./dir, /abs/dir, file:///abs/dir). Its store is
// rooted at the nearest directory at or above it that already is a file store (that holds
// .wharf-meta: made by wharf mb or by an earlier write), so that every command sees the same
// keys, ETags and metadata for one file however it is named. Without such a directory the
// path itself is the root; a path naming one object is then re-rooted at its parent (object).

// parsePath parses a plain local path, relative to the working directory.
func parsePath(p string) (driver.Location, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return driver.Location{}, &driver.Error{Op: "parse-url", Key: p, Kind: driver.ErrConfig, Err: err}
	}
	return locate(abs, strings.HasSuffix(p, "/")), nil
}

// parseURL parses what follows file://, which must be an absolute path.
func parseURL(rest string) (driver.Location, error) {
	if !strings.HasPrefix(rest, "/") {
		return driver.Location{}, &driver.Error{Op: "parse-url", Key: "file://" + rest, Kind: driver.ErrConfig,
			Err: errors.New("file URL must be absolute: file:///dir")}
	}
	return locate(filepath.Clean(filepath.FromSlash(rest)), strings.HasSuffix(rest, "/")), nil
}

// locate finds the store root of abs (see above). dirLike says the path named a directory
// (it ended in '/'); so does an existing directory. The key of a directory ends in '/'.
func locate(abs string, dirLike bool) driver.Location {
	dirLike = dirLike || isDir(abs)
	for d := abs; ; d = filepath.Dir(d) {
		if isDir(filepath.Join(d, metaDir)) {
			rel, _ := filepath.Rel(d, abs)
			key := ""
			if rel != "." {
				key = filepath.ToSlash(rel)
				if dirLike {
					key += "/"
				}
			}
			return driver.Location{Scheme: "file", Bucket: d, Key: key}
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return driver.Location{Scheme: "file", Bucket: abs}
}

// object re-roots a location that names one file but is its own root (no store above it):
// the root becomes its directory and the key its name. A directory stays as it is: it names
// no object.
func object(loc driver.Location) driver.Location {
	if loc.Key != "" || isDir(loc.Bucket) {
		return loc
	}
	if _, err := os.Lstat(loc.Bucket); err != nil && !os.IsNotExist(err) {
		return loc
	}
	dir, base := filepath.Split(loc.Bucket)
	if base == "" {
		return loc
	}
	loc.Bucket, loc.Key = filepath.Clean(dir), base
	return loc
}

// IsStore reports whether dir is the root of a file store: it holds the hidden .wharf-meta
// directory (made by MakeBucket, which is wharf mb, or by a write through the store).
func IsStore(dir string) bool { return isDir(filepath.Join(dir, metaDir)) }
