//go:build unix

package export

import "golang.org/x/sys/unix"

// diskSpace returns the bytes free (to an unprivileged user) and in all of the file system
// holding dir.
func diskSpace(dir string) (free, total uint64, ok bool) {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return 0, 0, false
	}
	return uint64(st.Bavail) * uint64(st.Bsize), uint64(st.Blocks) * uint64(st.Bsize), true
}
