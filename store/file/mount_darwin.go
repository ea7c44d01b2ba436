package file

import (
	"path/filepath"
	"syscall"
)

// mountType names the file system holding dir ("apfs", "hfs", "nfs", "smbfs"…), or its
// nearest existing parent; "" means statfs failed everywhere.
func mountType(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		var st syscall.Statfs_t
		if err := syscall.Statfs(d, &st); err == nil {
			b := make([]byte, 0, len(st.Fstypename))
			for _, c := range st.Fstypename {
				if c == 0 {
					break
				}
				b = append(b, byte(c))
			}
			return string(b)
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}
