package storetest

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/probe"
)

func (su *suite) testConditional(t *testing.T) {
	t.Run("CreateIfAbsent", su.testCreateIfAbsent)
	t.Run("IfMatchCurrent", su.testIfMatchCurrent)
	t.Run("IfMatchStale", su.testIfMatchStale)
	t.Run("IfMatchMissing", su.testIfMatchMissing)
	t.Run("DeleteIfMatch", su.testDeleteIfMatch)
	t.Run("BothConditions", su.testBothConditions)
	t.Run("CreateRace", su.testCreateRace)
	t.Run("ReplaceRace", su.testReplaceRace)
	t.Run("NoLostUpdate", su.testNoLostUpdate)
}

// testCreateIfAbsent: create-if-absent succeeds on an absent key, and on a present key fails
// and leaves the object untouched where the probe says creates are enforced.
func (su *suite) testCreateIfAbsent(t *testing.T) {
	s := su.open(t)
	create := &store.PutOptions{IfNoneMatch: true}
	first := putBytes(t, s, "c", []byte("first"), create)
	_, err := tryPut(t, s, "c", []byte("second"), create)
	if su.verdict(t, probe.CapConditionalCreate) == probe.No {
		if err != nil {
			t.Fatalf("probe says create-if-absent is not enforced, but the second create failed: %v", err)
		}
		wantContent(t, s, "c", []byte("second"), "unenforced create")
		return
	}
	wantKind(t, err, store.ErrPreconditionFailed, "create-if-absent on a present key")
	if info := wantContent(t, s, "c", []byte("first"), "failed create"); info.ETag != first.ETag {
		t.Errorf("failed create changed the ETag: %q, want %q", info.ETag, first.ETag)
	}
}

// testIfMatchCurrent: a put with the current ETag replaces the object.
func (su *suite) testIfMatchCurrent(t *testing.T) {
	s := su.open(t)
	first := putBytes(t, s, "m", []byte("v1"), nil)
	second := putBytes(t, s, "m", []byte("v2"), &store.PutOptions{IfMatch: first.ETag})
	if second.ETag == first.ETag || second.ETag == "" {
		t.Errorf("replace: ETag %q, want a new one (old %q)", second.ETag, first.ETag)
	}
	wantContent(t, s, "m", []byte("v2"), "replace with the current ETag")
	putBytes(t, s, "m", []byte("v3"), &store.PutOptions{IfMatch: second.ETag})
	wantContent(t, s, "m", []byte("v3"), "second replace")
}

// testIfMatchStale: a put with a stale ETag fails and leaves the object untouched where the
// probe says replaces are enforced.
func (su *suite) testIfMatchStale(t *testing.T) {
	s := su.open(t)
	old := putBytes(t, s, "m", []byte("v1"), nil)
	cur := putBytes(t, s, "m", []byte("v2"), nil)
	_, err := tryPut(t, s, "m", []byte("v3"), &store.PutOptions{IfMatch: old.ETag})
	if su.verdict(t, probe.CapConditionalReplace) == probe.No {
		if err != nil {
			t.Fatalf("probe says If-Match puts are not enforced, but the stale put failed: %v", err)
		}
		wantContent(t, s, "m", []byte("v3"), "unenforced stale replace")
		return
	}
	wantKind(t, err, store.ErrPreconditionFailed, "put with a stale If-Match")
	if info := wantContent(t, s, "m", []byte("v2"), "failed replace"); info.ETag != cur.ETag {
		t.Errorf("failed replace changed the ETag: %q, want %q", info.ETag, cur.ETag)
	}
}

// testIfMatchMissing: an If-Match put on a missing key is ErrPreconditionFailed (S3 answers
// 404 NoSuchKey, which backends normalise) and creates nothing.
func (su *suite) testIfMatchMissing(t *testing.T) {
	s := su.open(t)
	etag := putBytes(t, s, "other", []byte("x"), nil).ETag
	_, err := tryPut(t, s, "absent", []byte("y"), &store.PutOptions{IfMatch: etag})
	if su.verdict(t, probe.CapConditionalReplace) == probe.No {
		return
	}
	wantKind(t, err, store.ErrPreconditionFailed, "If-Match put on a missing key")
	if errors.Is(err, store.ErrNotExist) {
		t.Errorf("If-Match put on a missing key: %v also unwraps to ErrNotExist", err)
	}
	wantAbsent(t, s, "absent", "after a failed If-Match put")
}

// testDeleteIfMatch: a delete with a stale ETag fails and keeps the object where the probe
// says conditional deletes are enforced, and deletes it where the probe says they are not
// (MinIO). A delete with the current ETag deletes.
func (su *suite) testDeleteIfMatch(t *testing.T) {
	s := su.open(t)
	old := putBytes(t, s, "d", []byte("v1"), nil)
	cur := putBytes(t, s, "d", []byte("v2"), nil)
	err := s.Delete(t.Context(), "d", &store.DeleteOptions{IfMatch: old.ETag})
	if su.verdict(t, probe.CapConditionalDelete) == probe.No {
		if err != nil {
			t.Fatalf("probe says conditional deletes are not enforced, but the stale delete failed: %v", err)
		}
		wantAbsent(t, s, "d", "unenforced stale delete")
		cur = putBytes(t, s, "d", []byte("v2"), nil)
	} else {
		wantKind(t, err, store.ErrPreconditionFailed, "delete with a stale If-Match")
		wantContent(t, s, "d", []byte("v2"), "failed conditional delete")
	}
	if err := s.Delete(t.Context(), "d", &store.DeleteOptions{IfMatch: cur.ETag}); err != nil {
		t.Fatalf("delete with the current ETag: %v", err)
	}
	wantAbsent(t, s, "d", "after a delete with the current ETag")
}

// testBothConditions: IfNoneMatch and IfMatch together are refused before any write.
func (su *suite) testBothConditions(t *testing.T) {
	s := su.open(t)
	_, err := tryPut(t, s, "both", []byte("x"), &store.PutOptions{IfNoneMatch: true, IfMatch: "abc"})
	wantKind(t, err, store.ErrConfig, "put with IfNoneMatch and IfMatch")
	wantAbsent(t, s, "both", "after a refused put")
}

const (
	racers = 8
	rounds = 5
)

// race runs racers goroutines calling put(racer) at once and returns each one's error.
func race(put func(racer int) error) []error {
	errs := make([]error, racers)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range racers {
		done.Go(func() {
			start.Wait()
			errs[i] = put(i)
		})
	}
	start.Done()
	done.Wait()
	return errs
}

// settle resolves a conditional put that ended ErrOutcomeUnknown the way every caller must:
// one Head comparing the put's wharf-put-id. Landed is success; not landed is a lost race.
func settle(t *testing.T, s *store.Store, key string, err error) error {
	var e *store.Error
	if !errors.Is(err, store.ErrOutcomeUnknown) || !errors.As(err, &e) || e.PutID == "" {
		return err
	}
	_, landed, herr := s.ResolvePut(t.Context(), key, e.PutID)
	switch {
	case herr != nil:
		return herr
	case landed:
		return nil
	}
	return &store.Error{Op: "put", Key: key, Kind: store.ErrPreconditionFailed, Err: err}
}

// winner checks that exactly one racer succeeded and every other got ErrPreconditionFailed.
func winner(t *testing.T, what string, errs []error) int {
	t.Helper()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil && won >= 0:
			t.Errorf("%s: racers %d and %d both won", what, won, i)
		case err == nil:
			won = i
		case !errors.Is(err, store.ErrPreconditionFailed):
			t.Errorf("%s: racer %d: %v, want success or ErrPreconditionFailed", what, i, err)
		}
	}
	if won < 0 {
		t.Errorf("%s: no racer won", what)
	}
	return won
}

// testCreateRace: 8 racers create-if-absent one key per round; exactly one wins and its body
// is what the key holds.
func (su *suite) testCreateRace(t *testing.T) {
	s := su.open(t)
	if su.verdict(t, probe.CapConditionalCreate) != probe.Yes {
		t.Skip("the probe says create-if-absent is not enforced")
	}
	for r := range rounds {
		key := fmt.Sprintf("race/%d", r)
		errs := race(func(i int) error {
			_, err := tryPut(t, s, key, fmt.Appendf(nil, "racer %d", i), &store.PutOptions{IfNoneMatch: true})
			return settle(t, s, key, err)
		})
		if won := winner(t, key, errs); won >= 0 {
			wantContent(t, s, key, fmt.Appendf(nil, "racer %d", won), "race winner")
		}
	}
}

// testReplaceRace: 8 racers read the same ETag and replace with If-Match; exactly one wins
// per round (no lost update).
func (su *suite) testReplaceRace(t *testing.T) {
	s := su.open(t)
	if su.verdict(t, probe.CapConditionalReplace) != probe.Yes {
		t.Skip("the probe says If-Match puts are not enforced")
	}
	etag := putBytes(t, s, "counter", []byte("start"), nil).ETag
	for r := range rounds {
		errs := race(func(i int) error {
			_, err := tryPut(t, s, "counter", fmt.Appendf(nil, "round %d racer %d", r, i), &store.PutOptions{IfMatch: etag})
			return settle(t, s, "counter", err)
		})
		won := winner(t, fmt.Sprintf("round %d", r), errs)
		if won < 0 {
			return
		}
		info := wantContent(t, s, "counter", fmt.Appendf(nil, "round %d racer %d", r, won), "replace race winner")
		etag = info.ETag
	}
}

// testNoLostUpdate has writers increment one counter by read-modify-write under If-Match,
// each retrying when it loses: every increment lands exactly once. A store that lets two
// replaces of one ETag through loses increments, and the count shows it.
func (su *suite) testNoLostUpdate(t *testing.T) {
	s := su.open(t)
	if su.verdict(t, probe.CapConditionalReplace) != probe.Yes {
		t.Skip("the probe says If-Match puts are not enforced")
	}
	const writers, each = 4, 5
	putBytes(t, s, "counter", []byte("0"), nil)
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for done := 0; done < each; {
				data, info, err := tryGet(t, s, "counter", nil)
				if err != nil {
					t.Errorf("read the counter: %v", err)
					return
				}
				n, _ := strconv.Atoi(string(data))
				_, err = tryPut(t, s, "counter", []byte(strconv.Itoa(n+1)), &store.PutOptions{IfMatch: info.ETag})
				switch err = settle(t, s, "counter", err); {
				case err == nil:
					done++
				case !errors.Is(err, store.ErrPreconditionFailed):
					t.Errorf("increment: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	wantContent(t, s, "counter", []byte(strconv.Itoa(writers*each)), "the counter after every increment")
}
