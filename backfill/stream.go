package backfill

import "os"

// fileStream is a regular file that standard output names: synced before a commit.
type fileStream struct{ f *os.File }

func (s fileStream) Write(b []byte) (int, error) { return s.f.Write(b) }
func (s fileStream) Sync() error                 { return s.f.Sync() }

var _ Syncer = fileStream{}

// plainStream is standard output as it is (a terminal, a socket): without the file's Sync,
// which would fail on it.
type plainStream struct{ f *os.File }

func (s plainStream) Write(b []byte) (int, error) { return s.f.Write(b) }
