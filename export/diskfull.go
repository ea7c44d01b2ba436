package export

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/wharfdata/wharf/store"
)

// diskFull is a write that found no space left: it names the file and the disk (the file
// system, where it is mounted, and its free space), instead of the store's "unavailable". The
// store's error stays reachable with errors.Is and errors.As.
type diskFull struct {
	path string
	disk string
	err  error
}

func (e *diskFull) Error() string {
	return fmt.Sprintf("no space left on device writing %s (%s)", e.path, e.disk)
}

func (e *diskFull) Unwrap() error { return e.err }

// explainDiskFull returns err as a diskFull when it is ENOSPC from a file store s (key is
// the object written), else err unchanged.
func explainDiskFull(err error, s *store.Store, key string) error {
	if err == nil || !errors.Is(err, syscall.ENOSPC) {
		return err
	}
	path, ok := s.LocalPath(key)
	if !ok {
		return err
	}
	return &diskFull{path: path, disk: describeDisk(filepath.Dir(path)), err: err}
}

// describeDisk says which file system holds dir: its device, type and mount point (from
// /proc/self/mountinfo where there is one) and its free space.
func describeDisk(dir string) string {
	var parts []string
	if dev, fstype, mnt := mountOf(dir); mnt != "" {
		parts = append(parts, fmt.Sprintf("%s (%s) mounted at %s", dev, fstype, mnt))
	}
	if free, total, ok := diskSpace(dir); ok {
		parts = append(parts, fmt.Sprintf("%s free of %s", byteSize(free), byteSize(total)))
	}
	if len(parts) == 0 {
		return "the file system holding " + dir
	}
	return "the file system holding " + dir + ": " + strings.Join(parts, ", ")
}

// mountOf finds the mount with the longest mount point above dir in /proc/self/mountinfo.
func mountOf(dir string) (dev, fstype, mnt string) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", "", ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw,errors=continue
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, after := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(after) < 2 {
			continue
		}
		point := strings.ReplaceAll(fields[4], `\040`, " ")
		if (dir == point || strings.HasPrefix(dir, strings.TrimSuffix(point, "/")+"/")) && len(point) >= len(mnt) {
			dev, fstype, mnt = after[1], after[0], point
		}
	}
	return dev, fstype, mnt
}

func byteSize(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
