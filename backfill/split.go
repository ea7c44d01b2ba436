package backfill

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wharfdata/wharf/store"
)

// PackingVersion is part of every split id: a change to how splits are packed or read
// changes every id, so that no new split is mistaken for an old one.
const PackingVersion = "wharf-backfill-split/1"

// Member is one object of a split, pinned: it is read only while its ETag is this one.
type Member struct {
	Key  string `json:"key"` // the full key in the bucket
	Size int64  `json:"size"`
	ETag string `json:"etag"`
}

// Split is a split's descriptor: self-contained, so that a worker reads it without listing.
// Its ID is SplitID of its members.
type Split struct {
	ID      string   `json:"id"`
	Version string   `json:"version"` // PackingVersion
	Bytes   int64    `json:"bytes"`
	Members []Member `json:"members"`
	// Quarantined are the ordinals of the members an attempt leaves out, in order (objects
	// quarantined after max_attempts failures). It is set on the copy of the descriptor that
	// one attempt reads (a sink's Open sees it), never stored.
	Quarantined []int `json:"-"`
}

// without returns a copy of s that leaves out the members q names (sorted ordinals).
func (s *Split) without(q []int) *Split {
	c := *s
	c.Quarantined = q
	return &c
}

// Skipped reports whether member m is left out of this reading of the split.
func (s *Split) Skipped(m int) bool {
	_, found := slices.BinarySearch(s.Quarantined, m)
	return found
}

// PartID identifies the records this reading of the split delivers: the SplitID of the
// members it reads, which is the split's own id when none is left out. The same members at
// the same ETags always give the same id, and a reading that leaves out other members another.
func (s *Split) PartID() string {
	if len(s.Quarantined) == 0 {
		return s.ID
	}
	var in []Member
	for m, mem := range s.Members {
		if !s.Skipped(m) {
			in = append(in, mem)
		}
	}
	return SplitID(in)
}

// Left is how many members this reading of the split reads.
func (s *Split) Left() int { return len(s.Members) - len(s.Quarantined) }

// SplitID is the hex sha256 of the packing version and each member's key and ETag, in
// order: the same objects at the same versions always give the same id, and an overwritten
// object gives a new one.
func SplitID(members []Member) string {
	h := sha256.New()
	var n [4]byte
	field := func(s string) {
		binary.BigEndian.PutUint32(n[:], uint32(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	field(PackingVersion)
	for _, m := range members {
		field(m.Key)
		field(m.ETag)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Pack packs a sorted listing into splits of whole objects: a split closes before the object
// that would take it past target bytes, or once it has maxObjects objects; an object larger
// than target is a split alone.
func Pack(objects []store.ObjectInfo, target int64, maxObjects int) []*Split {
	var out []*Split
	var cur []Member
	var bytes int64
	flush := func() {
		if len(cur) == 0 {
			return
		}
		out = append(out, &Split{ID: SplitID(cur), Version: PackingVersion, Bytes: bytes, Members: cur})
		cur, bytes = nil, 0
	}
	for _, o := range objects {
		if len(cur) > 0 && (bytes+o.Size > target || len(cur) >= maxObjects) {
			flush()
		}
		cur = append(cur, Member{Key: o.Key, Size: o.Size, ETag: o.ETag})
		bytes += o.Size
	}
	flush()
	return out
}

// StatePrefix is where the bucket coordinator keeps jobs, at the root of its store; a
// listing of the source never includes it.
const StatePrefix = "_wharf/"

// List lists every object whose key starts with prefix (byte for byte), in sorted order,
// leaving out wharf's own records: every key with a _wharf segment at any depth (the
// coordinator's records below a coordinator_store's prefix, probe sentinels).
func List(ctx context.Context, s *store.Store, prefix string) ([]store.ObjectInfo, error) {
	var out []store.ObjectInfo
	for o, err := range s.Walk(ctx, prefix) {
		if err != nil {
			return nil, err
		}
		if IsState(o.Key) {
			continue
		}
		out = append(out, o)
	}
	return out, nil
}

// IsState reports whether key is one of wharf's own records: it has a _wharf segment.
func IsState(key string) bool {
	return strings.HasPrefix(key, StatePrefix) || strings.Contains(key, "/"+StatePrefix)
}

// Plan is a job's plan: which splits make it. Its ID digests the split ids in order.
type Plan struct {
	Job       string    `json:"job"`
	ID        string    `json:"id"`
	Source    string    `json:"source"` // the source URL
	Sink      string    `json:"sink"`   // "-" or the destination URL
	PlannedAt time.Time `json:"planned_at"`
	PlannedBy string    `json:"planned_by"`
	Splits    int       `json:"splits"`
	Objects   int64     `json:"objects"`
	Bytes     int64     `json:"bytes"`
	Pages     int       `json:"pages"`
	ids       []string
}

// PlanID is the hex sha256 of the split ids in order.
func PlanID(ids []string) string {
	h := sha256.New()
	for _, id := range ids {
		h.Write([]byte(id))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// newPlan makes the plan of splits.
func newPlan(job, source, sink, node string, splits []*Split, now time.Time) *Plan {
	p := &Plan{Job: job, Source: source, Sink: sink, PlannedAt: now.UTC(), PlannedBy: node, Splits: len(splits)}
	for _, s := range splits {
		p.ids = append(p.ids, s.ID)
		p.Objects += int64(len(s.Members))
		p.Bytes += s.Bytes
	}
	p.ID = PlanID(p.ids)
	p.Pages = (len(p.ids) + pageSize - 1) / pageSize
	return p
}

// pageSize is how many split ids one page of a plan holds.
const pageSize = 1000

// Offset packs a record's position, (member ordinal within its split, record index within
// the member), into one int64: the member in the high 23 bits, the record in the low 40.
func Offset(member int, record int64) int64 { return int64(member)<<40 | record }

// SplitOffset unpacks an Offset.
func SplitOffset(off int64) (member int, record int64) { return int(off >> 40), off & (1<<40 - 1) }

func (s *Split) String() string {
	return fmt.Sprintf("split %s (%d objects, %d bytes)", short(s.ID), len(s.Members), s.Bytes)
}
