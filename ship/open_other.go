//go:build !unix

package ship

import "os"

func openFile(path string) (*os.File, error) { return os.Open(path) }
