package file

import (
	"fmt"
	"path/filepath"
	"syscall"
)

// fsTypes maps statfs f_type magic numbers (linux/magic.h) to names.
var fsTypes = map[int64]string{
	0xEF53:     "ext4", // ext2, ext3 and ext4 share one magic number
	0x58465342: "xfs",
	0x9123683E: "btrfs",
	0x2FC12FC1: "zfs",
	0x01021994: "tmpfs",
	0x858458F6: "ramfs",
	0x794C7630: "overlay",
	0xF2F52010: "f2fs",
	0x3153464A: "jfs",
	0x52654973: "reiserfs",
	0x6969:     "nfs",
	0xFF534D42: "cifs",
	0xFE534D42: "smb2",
	0x517B:     "smb",
	0x65735546: "fuse",
	0x01021997: "9p",
	0x00C36400: "ceph",
	0x47504653: "gpfs",
	0x0BD00BD0: "lustre",
	0x5346414F: "afs",
	0x6B414653: "afs",
	0x73757245: "coda",
	0x4D44:     "vfat",
	0x2011BAB0: "exfat",
	0x5346544E: "ntfs",
	0x73717368: "squashfs",
	0x24051905: "ubifs",
	0x62656572: "sysfs",
	0x9FA0:     "proc",
}

// mountType names the file system holding dir, or its nearest existing parent. An unknown
// type is its magic number in hex; "" means statfs failed everywhere.
func mountType(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		var st syscall.Statfs_t
		if err := syscall.Statfs(d, &st); err == nil {
			return fsTypeName(int64(st.Type))
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

func fsTypeName(t int64) string {
	t &= 0xFFFFFFFF
	if name, ok := fsTypes[t]; ok {
		return name
	}
	return fmt.Sprintf("0x%x", t)
}
