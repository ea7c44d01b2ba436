//go:build !unix

package lease

import (
	"errors"
	"os"
)

var errNoFlock = errors.New("machine leases need flock, which this platform lacks")

func tryLock(*os.File) (bool, error) { return false, errNoFlock }

func unlock(*os.File) error { return errNoFlock }
