package file

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"

	"github.com/wharfdata/wharf/store/driver"
)

// sidecar is what the store records about an object beside its file. Size, MtimeNs and Ino
// bind it to one version of the file: when they no longer match, the sidecar is stale.
type sidecar struct {
	Key         string            `json:"key"`
	ETag        string            `json:"etag"`
	Size        int64             `json:"size"`
	MtimeNs     int64             `json:"mtime_ns"`
	Ino         uint64            `json:"ino"`
	ContentType string            `json:"content_type,omitempty"`
	Headers     driver.Headers    `json:"headers,omitzero"`
	Metadata    map[string]string `json:"metadata,omitempty"`
}

// sidecarPath names the sidecar of key: a hash, so that no key can collide with another's.
func sidecarPath(key string) string {
	h := sha256.Sum256([]byte(key))
	x := hex.EncodeToString(h[:])
	return filepath.FromSlash(objDir + "/" + x[:2] + "/" + x + ".json")
}

func (sc *sidecar) matches(key string, fi fs.FileInfo) bool {
	return sc.Key == key && sc.Size == fi.Size() && sc.MtimeNs == fi.ModTime().UnixNano() && sc.Ino == inode(fi)
}

// readSidecar returns key's sidecar when it exists and matches fi.
func readSidecar(r *os.Root, key string, fi fs.FileInfo) (*sidecar, bool) {
	b, err := r.ReadFile(sidecarPath(key))
	if err != nil {
		return nil, false
	}
	var sc sidecar
	if json.Unmarshal(b, &sc) != nil || !sc.matches(key, fi) {
		return nil, false
	}
	return &sc, true
}

// plainETag is the ETag of a file without a valid sidecar: it changes whenever the file is
// written or replaced.
func plainETag(fi fs.FileInfo) string {
	return fmt.Sprintf("f%x-%x-%x", inode(fi), fi.ModTime().UnixNano(), fi.Size())
}

// infoOf describes the regular file fi at key, from its sidecar where valid.
func infoOf(r *os.Root, key string, fi fs.FileInfo, withMeta bool) driver.ObjectInfo {
	info := driver.ObjectInfo{Key: key, Size: fi.Size(), LastModified: fi.ModTime().UTC(), ETag: plainETag(fi)}
	if sc, ok := readSidecar(r, key, fi); ok {
		info.ETag = sc.ETag
		if withMeta {
			info.ContentType = sc.ContentType
			info.Headers = sc.Headers
			info.Metadata = maps.Clone(sc.Metadata)
		}
	}
	return info
}

// current returns the object at key: exists is false when there is no regular file there;
// isDir is true when a directory (of other keys) is there.
func current(r *os.Root, op, key string) (info driver.ObjectInfo, exists, isDir bool, err error) {
	fi, err := r.Lstat(filepath.FromSlash(key))
	switch {
	case err != nil && isNotExist(err):
		return info, false, false, nil
	case err != nil:
		return info, false, false, mapErr(op, key, err)
	case fi.IsDir():
		return info, false, true, nil
	case !fi.Mode().IsRegular():
		return info, false, false, nil
	}
	return infoOf(r, key, fi, true), true, false, nil
}
