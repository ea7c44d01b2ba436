package transfer

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// preallocate reserves size bytes of disk for f, whose length stays what is written
// (fallocate(2) with FALLOC_FL_KEEP_SIZE). On ext4 a write into reserved blocks skips the
// delayed allocation of each page, which took about a third of the kernel's time per byte
// written (bench/README.md). It reports only a full disk, so that a download that cannot fit
// fails before it starts; a file system without fallocate writes as it did.
func preallocate(f *os.File, size int64) error {
	err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, 0, size)
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return err
	}
	return nil
}
