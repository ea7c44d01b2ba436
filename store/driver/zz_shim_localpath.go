package driver

import "path/filepath"

// LocalPath is a throwaway stand-in for the lead's store.Location.LocalPath (issue 22): the
// local path of a file location and true; "", false for any other scheme.
func (l Location) LocalPath() (string, bool) {
	if l.Scheme != "file" {
		return "", false
	}
	return filepath.Join(l.Bucket, filepath.FromSlash(l.Key)), true
}
