package iceberg

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	icego "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/wharfdata/wharf/store"
)

// checkProcessHistory is the history checker of the committer processes: it reads the table
// as it is now and returns an error unless
//
//   - its history is linear: the snapshots, in the metadata's order, have sequence numbers
//     1, 2, …, the first has no parent, each other's parent is the one before, and the
//     current snapshot is the last;
//   - it has exactly appends snapshots, each an append that added one data file, and no
//     manifest entry names a snapshot outside the history (nothing doubled, nothing stray);
//   - every appended file is in exactly one snapshot: the file of each Append reported ok
//     is in the table once, in the snapshot (and at the sequence number) the Append said it
//     made, and that is the sequence number of the metadata version it said it created
//     (version 1 is the empty table, each append one more); a file refused with
//     ErrCommitConflict is not in it; no file is there that no Append added;
//   - the order is consistent with real time: porcupine finds the operations, with a final
//     read of the table's files in history order, linearizable against a model of an
//     append-only log (each Append reported ok lands at the position it reported; one
//     failed otherwise may have landed, at any time after its call). So an Append that
//     returned before another was called is earlier in the history.
func checkProcessHistory(ctx context.Context, st *store.Store, ops []procOp, appends int) error {
	readCall := time.Now().UnixNano()
	tbl, err := Load(ctx, st, nil)
	if err != nil {
		return err
	}
	snaps := tbl.Snapshots()
	var errs []error
	if len(snaps) != appends {
		errs = append(errs, fmt.Errorf("%d snapshots, want %d", len(snaps), appends))
	}
	errs = append(errs, checkLinear(tbl, snaps)...)
	history, where, herrs := addedFiles(ctx, tbl, snaps)
	errs = append(errs, herrs...)
	readRet := time.Now().UnixNano()

	var lost, doubled, misplaced, stray []string
	appended := map[string]bool{}
	for _, op := range ops {
		appended[op.File] = true
		in := where[op.File]
		switch {
		case len(in) > 1:
			doubled = append(doubled, fmt.Sprintf("%s in %d snapshots", op.File, len(in)))
		case op.OK && len(in) == 0:
			lost = append(lost, fmt.Sprintf("%s (committer %d said snapshot %d, seq %d)", op.File, op.Proc, op.Snapshot, op.Seq))
		case op.OK && (in[0].id != op.Snapshot || in[0].seq != op.Seq || int64(op.Version) != op.Seq+1):
			misplaced = append(misplaced, fmt.Sprintf("%s: committer %d said snapshot %d seq %d in v%d, table has snapshot %d seq %d",
				op.File, op.Proc, op.Snapshot, op.Seq, op.Version, in[0].id, in[0].seq))
		case op.Conflict && len(in) > 0:
			stray = append(stray, op.File+" (refused, yet committed)")
		}
	}
	for f := range where {
		if !appended[f] {
			stray = append(stray, f+" (no Append added it)")
		}
	}
	for _, l := range []struct {
		what  string
		names []string
	}{{"appends reported ok are not in the table", lost}, {"files doubled", doubled}, {"appends are not where they said", misplaced}, {"files stray", stray}} {
		if len(l.names) > 0 {
			slices.Sort(l.names)
			errs = append(errs, fmt.Errorf("%d %s: %v", len(l.names), l.what, firstFew(l.names)))
		}
	}
	if err := checkRealTime(ops, history, readCall, readRet); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 8 {
		errs = append(errs[:8], fmt.Errorf("… and %d more", len(errs)-8))
	}
	if len(errs) > 0 {
		return fmt.Errorf("history check:\n%w", errors.Join(errs...))
	}
	return nil
}

// checkLinear checks that snaps, in the metadata's order, are a linear history.
func checkLinear(tbl *Table, snaps []table.Snapshot) []error {
	var errs []error
	for i, s := range snaps {
		switch {
		case i == 0 && s.ParentSnapshotID != nil:
			errs = append(errs, fmt.Errorf("first snapshot %d has parent %d", s.SnapshotID, *s.ParentSnapshotID))
		case i > 0 && (s.ParentSnapshotID == nil || *s.ParentSnapshotID != snaps[i-1].SnapshotID):
			errs = append(errs, fmt.Errorf("snapshot %d (seq %d): parent %v, want %d", s.SnapshotID, s.SequenceNumber, s.ParentSnapshotID, snaps[i-1].SnapshotID))
		}
		if s.SequenceNumber != int64(i+1) {
			errs = append(errs, fmt.Errorf("snapshot %d: sequence number %d, want %d", s.SnapshotID, s.SequenceNumber, i+1))
		}
		if s.Summary == nil || s.Summary.Operation != table.OpAppend || s.Summary.Properties["added-data-files"] != "1" {
			errs = append(errs, fmt.Errorf("snapshot %d: summary %v, want an append of 1 file", s.SnapshotID, s.Summary))
		}
	}
	if cur := tbl.CurrentSnapshot(); len(snaps) > 0 && (cur == nil || cur.SnapshotID != snaps[len(snaps)-1].SnapshotID) {
		errs = append(errs, fmt.Errorf("current snapshot %v is not the last", cur))
	}
	return errs
}

// snapAt is a snapshot's id and sequence number.
type snapAt struct{ id, seq int64 }

// addedFiles reads the entries of the current snapshot's manifests (with an append-only
// history they are every file ever added, each naming the snapshot that added it) and
// returns the file each snapshot of snaps added (history, in order) and the snapshots that
// added each file.
func addedFiles(ctx context.Context, tbl *Table, snaps []table.Snapshot) ([]string, map[string][]snapAt, []error) {
	var errs []error
	where := map[string][]snapAt{}
	byID := map[int64][]string{}
	if cur := tbl.CurrentSnapshot(); cur != nil {
		fio := tbl.FileIO().WithContext(ctx)
		manifests, err := cur.Manifests(fio)
		if err != nil {
			return nil, nil, []error{err}
		}
		for _, m := range manifests {
			for e, err := range m.Entries(fio, false) {
				if err != nil {
					return nil, nil, []error{err}
				}
				path := e.DataFile().FilePath()
				if e.Status() == icego.EntryStatusDELETED {
					errs = append(errs, fmt.Errorf("%s deleted by snapshot %d in an append-only history", path, e.SnapshotID()))
					continue
				}
				where[path] = append(where[path], snapAt{e.SnapshotID(), e.SequenceNum()})
				byID[e.SnapshotID()] = append(byID[e.SnapshotID()], path)
			}
		}
	}
	history := make([]string, len(snaps))
	for i, s := range snaps {
		files := byID[s.SnapshotID]
		delete(byID, s.SnapshotID)
		if len(files) != 1 {
			errs = append(errs, fmt.Errorf("snapshot %d (seq %d) added %d files, want 1: %v", s.SnapshotID, s.SequenceNumber, len(files), firstFew(files)))
			continue
		}
		history[i] = files[0]
	}
	for id, files := range byID {
		errs = append(errs, fmt.Errorf("%d files added by snapshot %d, which is not in the history: %v", len(files), id, firstFew(files)))
	}
	return history, where, errs
}

// logInput and logOutput are an operation on the model of an append-only log: an append
// of a file, or a read of the whole log.
type logInput struct {
	read bool
	file string
}

type logOutput struct {
	ok, unknown bool
	seq         int64  // the position an append reported it landed at (1 is the first)
	files       string // what a read found: the files in order, one a line
}

// logState is the log: its length, and its files one a line.
type logState struct {
	n     int64
	files string
}

// logModel is an append-only log. An append reported ok lands at the position it reported;
// one refused as a conflict changes nothing; one failed otherwise may have landed or not.
var logModel = porcupine.NondeterministicModel{
	Init: func() []any { return []any{logState{}} },
	Step: func(st, in, out any) []any {
		s, i, o := st.(logState), in.(logInput), out.(logOutput)
		landed := logState{s.n + 1, s.files + i.file + "\n"}
		switch {
		case i.read && o.files == s.files:
			return []any{s}
		case i.read:
			return nil
		case o.ok && o.seq == landed.n:
			return []any{landed}
		case o.ok:
			return nil
		case o.unknown:
			return []any{s, landed}
		}
		return []any{s}
	},
	Equal: func(a, b any) bool { return a.(logState) == b.(logState) },
	DescribeOperation: func(in, out any) string {
		i, o := in.(logInput), out.(logOutput)
		if i.read {
			return fmt.Sprintf("read → %d files", strings.Count(o.files, "\n"))
		}
		return fmt.Sprintf("append %s → %+v", filepath.Base(i.file), o)
	},
}

// checkRealTime checks with porcupine that ops, then a read of history between readCall and
// readRet, are linearizable against logModel; and, to say which, names the appends that
// returned before another was called yet are later in the history.
func checkRealTime(ops []procOp, history []string, readCall, readRet int64) error {
	hist := make([]porcupine.Operation, 0, len(ops)+1)
	pos := map[string]int{}
	for i, f := range history {
		pos[f] = i
	}
	var inverted []string
	for _, a := range ops {
		ret := a.Return
		if !a.OK && !a.Conflict {
			ret = math.MaxInt64 // it may land any time after its call
		}
		hist = append(hist, porcupine.Operation{ClientId: a.Proc, Call: a.Call, Return: ret,
			Input: logInput{file: a.File}, Output: logOutput{ok: a.OK, unknown: !a.OK && !a.Conflict, seq: a.Seq}})
		pa, ok := pos[a.File]
		for _, b := range ops {
			if pb, in := pos[b.File]; ok && in && a.Return < b.Call && pa > pb {
				inverted = append(inverted, fmt.Sprintf("%s (seq %d) returned before %s (seq %d) was called", filepath.Base(a.File), pa+1, filepath.Base(b.File), pb+1))
			}
		}
	}
	var read strings.Builder
	for _, f := range history {
		read.WriteString(f + "\n")
	}
	hist = append(hist, porcupine.Operation{ClientId: processes, Call: readCall, Return: readRet,
		Input: logInput{read: true}, Output: logOutput{files: read.String()}})
	res := porcupine.CheckOperationsTimeout(logModel.ToModel(), hist, time.Minute)
	switch {
	case res == porcupine.Ok && len(inverted) == 0:
		return nil
	case len(inverted) > 0:
		return fmt.Errorf("not linearizable (porcupine: %s): %d pairs out of real-time order: %v", res, len(inverted), firstFew(inverted))
	}
	return fmt.Errorf("not linearizable (porcupine: %s) against an append-only log", res)
}

// The real-time part of the checker on made-up histories: appends that overlap may land in
// either order; one that returned before another was called must land first; two that
// report one position cannot both be right.
func TestProcessCheckerRealTime(t *testing.T) {
	op := func(proc int, file string, call, ret, seq int64) procOp {
		return procOp{Proc: proc, File: file, Call: call, Return: ret, OK: true, Seq: seq}
	}
	for _, c := range []struct {
		name    string
		ops     []procOp
		history []string
		ok      bool
	}{
		{"in order", []procOp{op(0, "a", 0, 10, 1), op(1, "b", 20, 30, 2)}, []string{"a", "b"}, true},
		{"overlapping, either order", []procOp{op(0, "a", 0, 20, 2), op(1, "b", 10, 30, 1)}, []string{"b", "a"}, true},
		{"reordered", []procOp{op(0, "a", 0, 10, 2), op(1, "b", 20, 30, 1)}, []string{"b", "a"}, false},
		{"one position twice", []procOp{op(0, "a", 0, 20, 1), op(1, "b", 10, 30, 1)}, []string{"a"}, false},
		{"refused yet read", []procOp{{Proc: 0, File: "a", Call: 0, Return: 10, Conflict: true}}, []string{"a"}, false},
		{"failed, maybe landed", []procOp{{Proc: 0, File: "a", Call: 0, Return: 10}, op(1, "b", 20, 30, 2)}, []string{"a", "b"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkRealTime(c.ops, c.history, 100, 110)
			if (err == nil) != c.ok {
				t.Fatalf("checkRealTime: %v, want ok=%v", err, c.ok)
			}
			if err != nil {
				t.Log(err)
			}
		})
	}
}
