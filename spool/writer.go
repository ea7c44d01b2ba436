package spool

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// Writer writes a new file straight into a spool, for programs that produce files themselves:
// Write the bytes (hashed as they go), then Commit to spool the file, or Abort to drop it.
// Until Commit returns the file is only a locked temporary file in tmp/: a crash before then
// leaves nothing recorded (and Open removes the temporary file). A Writer is not safe for
// concurrent use.
type Writer struct {
	// Logger receives the warnings of Commit (a torn catalog line removed); nil: none.
	Logger *slog.Logger
	// Clock says whether the clock that gives Commit's event time is synchronized;
	// ClockUnknown asks the kernel at Commit (see AddOptions.Clock).
	Clock Clock

	info    Info
	dataset string
	ext     string
	st      *staged
	done    bool
}

// Create starts a new file of dataset, with extension ext, in the spool at dir. Errors:
// ErrNotSpool, ErrInput (a bad dataset or extension), store.ErrForbidden (tmp/ not writable),
// ErrIO.
func Create(dir, dataset, ext string) (*Writer, error) {
	const op = "create"
	info, err := readInfo(op, absDir(dir))
	if err != nil {
		return nil, err
	}
	if err := checkDataset(op, dataset); err != nil {
		return nil, err
	}
	if err := checkExt(op, "", ext); err != nil {
		return nil, err
	}
	st, err := newStaged(op, info, dataset, ext)
	if err != nil {
		return nil, err
	}
	return &Writer{info: info, dataset: dataset, ext: ext, st: st}, nil
}

// Write appends p to the file.
func (w *Writer) Write(p []byte) (int, error) {
	if w.done {
		return 0, newErr("write", w.info.Dir, ErrState, errWriterDone)
	}
	n, err := w.st.f.Write(p)
	w.st.h.Write(p[:n])
	w.st.size += int64(n)
	if err != nil {
		return n, ioErr("write", w.st.path, err)
	}
	return n, nil
}

// Commit fsyncs the file and spools it as Add does: the next sequence numbers (records of
// them; 0 means 1), ready/, the finalized and eligible records. t is the file's event time;
// zero means now. After Commit, successful or not, the Writer is done; a failed Commit leaves
// nothing recorded and nothing in ready/.
func (w *Writer) Commit(ctx context.Context, t time.Time, records uint64) (File, error) {
	const op = "commit"
	if w.done {
		return File{}, newErr(op, w.info.Dir, ErrState, errWriterDone)
	}
	w.done = true
	defer w.st.discard()
	if err := ctx.Err(); err != nil {
		return File{}, err
	}
	if err := w.st.f.Sync(); err != nil {
		return File{}, ioErr(op, w.st.path, err)
	}
	at("tmp-written")
	if err := parseClock(op, w.Clock); err != nil {
		return File{}, err
	}
	if t.IsZero() {
		t = time.Now()
	}
	if records == 0 {
		records = 1
	}
	ts := stamp{t, clockFor(w.Clock)}
	return w.st.commit(ctx, w.info, w.dataset, w.ext, ts, records, orDiscard(w.Logger))
}

// Abort drops the file. It is a no-op after Commit or Abort.
func (w *Writer) Abort() error {
	if !w.done {
		w.done = true
		w.st.discard()
	}
	return nil
}

var errWriterDone = errors.New("the writer was already committed or aborted")
