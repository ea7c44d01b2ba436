package storetest

import (
	"context"
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/probe"
)

// Harness tells Run how to reach one backend.
type Harness struct {
	// Name labels failures ("mem", "file", "s3-minio").
	Name string

	// Open returns a fresh, empty store for one subtest (a new bucket, directory or mem name),
	// the portable store that store.Open returns (keys validated, the retry policy), and registers its
	// cleanup with t.Cleanup. Subtests run in parallel, so Open must be safe to call
	// concurrently. Required.
	Open func(t *testing.T) *store.Store

	// OpenMissing returns a store whose bucket (or root directory) does not exist, wrapped
	// like Open's. Nil skips the bucket-missing cases.
	OpenMissing func(t *testing.T) *store.Store

	// OpenUploads returns how many multipart uploads are open in s's bucket. Nil skips the
	// checks that a failed large put leaves none open.
	OpenUploads func(t *testing.T, s *store.Store) int

	// Probe runs the probe on a fresh store from Open. Nil means probe.Run(ctx, s, nil).
	Probe func(ctx context.Context, s *store.Store) (*probe.Result, error)

	// Want declares, by capability name (probe.CapConditionalCreate…),
	// the verdict (probe.Yes or probe.No) the backend is known to give. The suite asserts that
	// the probe agrees and that its own direct test observes the same.
	Want map[string]string

	// Large runs the multipart cases: bodies of LargeSize bytes sent in parts of PartSize.
	Large     bool
	PartSize  int64 // 0: 5 MiB
	LargeSize int64 // 0: 24 MiB + 1,234 bytes

	// EmptyPrefixesLinger declares that the server keeps listing a prefix after the last
	// object below it is deleted (SeaweedFS keeps the directory). The suite then asserts
	// that behaviour instead of its absence.
	EmptyPrefixesLinger bool

	// Checksums declares that a Head of an object wharf put returns its CRC-32C
	// (ObjectInfo.Checksum: the store's own, or wharf-crc32c). The suite then asserts it for
	// small and large objects alike; it asserts everywhere that one it returns is right.
	Checksums bool

	// NoTrailingSlash declares that the backend keeps objects as files and refuses keys
	// ending in '/' (the file store); the suite asserts the refusal instead of the objects.
	NoTrailingSlash bool
	// TrailingSlashQuirks names the operations ("read": head and get; "copy"; "all") on a key
	// ending in '/' that the server gets wrong, each with what it does instead; the suite
	// leaves them unchecked and logs why. (SeaweedFS answers 404 to a copy of one;
	// fake-gcs-server keeps none.)
	TrailingSlashQuirks map[string]string

	// ManyKeys is how many objects the pagination case lists; 0: 1,100 (more than one page
	// of S3's default 1,000).
	ManyKeys int
}

func (h Harness) withDefaults() Harness {
	if h.Name == "" {
		h.Name = "store"
	}
	if h.PartSize == 0 {
		h.PartSize = 5 << 20
	}
	if h.LargeSize == 0 {
		h.LargeSize = 24<<20 + 1234
	}
	if h.ManyKeys == 0 {
		h.ManyKeys = 1100
	}
	if h.Probe == nil {
		h.Probe = func(ctx context.Context, s *store.Store) (*probe.Result, error) {
			return probe.Run(ctx, s, nil)
		}
	}
	return h
}

// Run runs the conformance suite against the backend h opens. Each case gets a fresh store
// from h.Open. The probe runs first, outside any subtest so that it runs whatever -run
// selects; every conditional case then asserts what the probe claimed for that capability, so
// a store that silently ignores a condition fails.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.Open == nil {
		t.Fatal("storetest: Harness.Open is required")
	}
	su := &suite{h: h.withDefaults()}
	su.probe(t)
	t.Run("Put", su.testPut)
	t.Run("Get", su.testGet)
	t.Run("Conditional", su.testConditional)
	t.Run("Delete", su.testDelete)
	t.Run("List", su.testList)
	t.Run("Errors", su.testErrors)
	t.Run("Copy", su.testCopy)
	t.Run("Headers", su.testHeaders)
	t.Run("Multipart", su.testMultipart)
	t.Run("Portable", su.testPortable)
}

// suite holds what the cases share: the harness and the probe's verdicts.
type suite struct {
	h    Harness
	caps map[string]string // capability → verdict the probe gave (nil if the probe failed)
}

// open returns a fresh store for the running case and marks the case parallel.
func (su *suite) open(t *testing.T) *store.Store {
	t.Helper()
	t.Parallel()
	s := su.h.Open(t)
	if s == nil {
		t.Fatalf("%s: Harness.Open returned nil", su.h.Name)
	}
	return s
}
