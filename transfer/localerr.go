package transfer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/wharfdata/wharf/internal/atomicfile"
	"github.com/wharfdata/wharf/store"
)

const syscallENOTDIR = syscall.ENOTDIR

// isLink reports whether path itself is a symbolic link.
func isLink(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

// LocalError turns a local file error into a store error of the matching kind, so that it
// carries a WHARF_… code, and names path. A symbolic link that does not resolve (its target
// missing, or a loop of links) is ErrLinkBroken.
func LocalError(op, path string, err error) error {
	cause := err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		cause = pe.Err
	}
	switch {
	case errors.Is(err, syscall.ELOOP):
		return &store.Error{Op: op, Key: path, Kind: ErrLinkBroken,
			Err: fmt.Errorf("a loop of symbolic links: %w", cause)}
	case errors.Is(err, fs.ErrNotExist) && isLink(path):
		target, _ := os.Readlink(path)
		return &store.Error{Op: op, Key: path, Kind: ErrLinkBroken,
			Err: fmt.Errorf("a symbolic link to %q, which does not exist", target)}
	case errors.Is(err, fs.ErrNotExist):
		return &store.Error{Op: op, Key: path, Kind: store.ErrNotExist, Err: cause}
	case errors.Is(err, fs.ErrPermission):
		return &store.Error{Op: op, Key: path, Kind: store.ErrForbidden, Err: cause}
	}
	return fmt.Errorf("%s %q: %w", op, path, cause)
}

// writeErr reports a failed write to path: the context's error when it ended, else the cause
// naming the destination path (not the temporary file), "no space left on device" included.
func writeErr(ctx context.Context, path string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if store.IsContext(err) {
		return err
	}
	var we *atomicfile.WriteError
	if !errors.As(err, &we) {
		return err // the source failed: it says which
	}
	return LocalError("write", path, we.Err)
}
