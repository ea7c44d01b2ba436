package iceberg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/wharfdata/wharf/store"
)

// errLostRace is what a commit that found its metadata file already made returns: it wraps
// table.ErrCommitFailed, iceberg-go's "refresh and try again", so that the transaction
// committed nothing and the Table's own loop retries it on top of the winner.
var errLostRace = fmt.Errorf("another writer created the next metadata version first: %w", table.ErrCommitFailed)

// committer is the table.CatalogIO of a Table: iceberg-go's Transaction.Commit calls
// CommitTable with the updates and requirements the transaction built.
type committer struct{ t *Table }

var _ table.CatalogIO = committer{}

// LoadTable reads the table's current version (iceberg-go asks it only when its own commit
// retries are turned on by the table's commit.retry.num-retries property).
func (c committer) LoadTable(ctx context.Context, _ table.Identifier) (*table.Table, error) {
	if err := c.t.Refresh(ctx); err != nil {
		return nil, err
	}
	return c.t.Iceberg(), nil
}

// CommitTable checks reqs against the version the Table holds, applies updates to it and
// creates the next version only if absent. A version made meanwhile by another writer (or
// a requirement that no longer holds) is errLostRace: nothing was committed.
func (c committer) CommitTable(ctx context.Context, _ table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	t := c.t
	if t.readOnly {
		return nil, "", fmt.Errorf("%w: the table at %s was read from one of its metadata files, with no catalog to commit through", ErrMetadataInvalid, t.fio.root)
	}
	base, n := t.state()
	for _, r := range reqs {
		if err := r.Validate(base); err != nil {
			return nil, "", fmt.Errorf("%w: %w", errLostRace, err)
		}
	}
	next, err := table.UpdateTableMetadata(base, updates, t.MetadataLocation())
	if err != nil {
		return nil, "", fmt.Errorf("%w: applying the change to %s: %w", ErrMetadataInvalid, t.fio.location(metadataKey(n)), err)
	}
	if next.Location() != base.Location() {
		return nil, "", fmt.Errorf("%w: a change moves the table from %s to %s", ErrMetadataInvalid, base.Location(), next.Location())
	}
	if t.beforeCreate != nil {
		t.beforeCreate()
	}
	if t.opts.Catalog != nil {
		loc, err := t.commitToCatalog(ctx, next, n+1)
		if err != nil {
			return nil, "", err
		}
		return next, loc, nil
	}
	won, err := t.createMetadata(ctx, n+1, next)
	if err != nil {
		return nil, "", err
	}
	if !won {
		return nil, "", errLostRace
	}
	t.set(next, n+1)
	t.writeHint(ctx, n+1)
	return next, t.fio.location(metadataKey(n + 1)), nil
}

// createMetadata creates version n from meta only if absent, and reports whether it did. A
// lost answer is settled by the put's wharf-put-id: our write landed, or it did not (another
// writer's file is there, or none is and the caller retries as after a lost race).
func (t *Table) createMetadata(ctx context.Context, n int, meta table.Metadata) (bool, error) {
	body, err := json.Marshal(meta)
	if err != nil {
		return false, fmt.Errorf("%w: encoding %s: %w", ErrMetadataInvalid, metadataKey(n), err)
	}
	opts := &store.PutOptions{IfNoneMatch: !t.unconditional, ContentType: "application/json"}
	err = t.fio.WithContext(ctx).put(metadataKey(n), t.fio.location(metadataKey(n)), body, opts)
	var se *store.Error
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, store.ErrPreconditionFailed):
		return false, nil
	case errors.Is(err, store.ErrOutcomeUnknown) && errors.As(err, &se) && se.PutID != "":
		_, landed, rerr := t.st.ResolvePut(ctx, metadataKey(n), se.PutID)
		if rerr != nil {
			return false, errors.Join(err, rerr)
		}
		return landed, nil
	}
	return false, err
}

// commit makes one change to the table: change stages it on a transaction of the version
// the Table holds, and the transaction commits it as the next version. A lost race reads
// the winner, stages the change again on top of it and retries, after a jittered wait,
// up to Options.Attempts; then ErrCommitConflict.
func (t *Table) commit(ctx context.Context, what string, change func(context.Context, *table.Transaction) (bool, error)) error {
	t.commits.Lock()
	defer t.commits.Unlock()
	for attempt := 1; ; attempt++ {
		t.fio.written.take() // what this attempt writes is recorded from here
		tx := t.Iceberg().NewTransaction()
		staged, err := change(ctx, tx)
		if err != nil || !staged {
			t.removeUnreferenced(ctx, t.fio.written.take())
			return err
		}
		if _, err = tx.Commit(ctx); err == nil {
			return nil
		}
		if !errors.Is(err, table.ErrCommitFailed) {
			return err // the metadata file may be there (an answer lost): its files stay
		}
		// A lost race: no metadata file names what this attempt wrote.
		t.removeUnreferenced(ctx, t.fio.written.take())
		if attempt >= t.opts.Attempts {
			return fmt.Errorf("%w: %s to %s: %d attempts lost the race for the next metadata version", ErrCommitConflict, what, t.fio.root, attempt)
		}
		if err := sleep(ctx, t.backoff(attempt)); err != nil {
			return err
		}
		if err := t.Refresh(ctx); err != nil {
			return err
		}
	}
}

// removeUnreferenced deletes the manifests and manifest lists of a commit attempt that no
// metadata file names (a lost race, a change that failed to stage), so they are not left
// behind; the metadata file it lost to and the version hint are never among them. A delete
// that fails leaves the file, unreferenced, as a crash would.
func (t *Table) removeUnreferenced(ctx context.Context, keys []string) {
	for _, k := range keys {
		if metadataName.MatchString(k) || k == hintKey {
			continue
		}
		t.fio.kept.drop(k)
		_ = t.st.Delete(ctx, k, nil)
	}
}

// backoff is the wait after the attempt-th lost race: a uniform draw below a ceiling that
// doubles from Options.Backoff to Options.MaxBackoff.
func (t *Table) backoff(attempt int) time.Duration {
	ceiling := t.opts.Backoff << min(attempt-1, 20)
	if ceiling > t.opts.MaxBackoff || ceiling <= 0 {
		ceiling = t.opts.MaxBackoff
	}
	return rand.N(ceiling) + 1
}

func sleep(ctx context.Context, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

// Append adds files, Parquet files already written below the table's location, as one
// append snapshot. Each is a location (s3://bucket/table/data/x.parquet) or a key relative to
// the table's location (data/x.parquet). Each file's footer is read for its statistics, and
// its columns map to the schema's field ids by name (the table's name mapping) when the file
// carries none. A file the current snapshot already has is refused, and so is a file named
// twice; nothing is committed then. (Commit adds files from their writers' footers.)
func (t *Table) Append(ctx context.Context, files []string) error {
	if len(files) == 0 {
		return nil
	}
	_, err := t.Commit(ctx, Change{Files: byName(files)})
	return err
}

// Overwrite replaces every data file of the current snapshot by files (located as for
// Append) in one overwrite snapshot; a file both current and in files is kept. On a table
// without data files yet it is an append snapshot; when files are the current ones exactly
// it commits nothing. The current files are those of the version the commit is made on, so
// after a lost race the winner's files are replaced too.
func (t *Table) Overwrite(ctx context.Context, files []string) error {
	_, err := t.Commit(ctx, Change{Overwrite: true, Files: byName(files)})
	return err
}

func byName(files []string) []File {
	out := make([]File, len(files))
	for i, f := range files {
		out[i] = File{Path: f}
	}
	return out
}

// locations returns the table locations of files, each a location below the table's or a
// key relative to it; a location elsewhere is ErrOutsideTable.
func (t *Table) locations(files []string) ([]string, error) {
	out := make([]string, len(files))
	for i, f := range files {
		loc := f
		if !hasScheme(f) {
			if err := store.ValidateKey("add", f); err != nil {
				return nil, err
			}
			loc = t.fio.location(f)
		}
		if _, err := t.fio.Key(loc); err != nil {
			return nil, err
		}
		out[i] = loc
	}
	return out, nil
}

// hasScheme reports whether s begins with a URL scheme ("s3://").
func hasScheme(s string) bool {
	for i, c := range s {
		switch {
		case c == ':':
			return i > 0 && len(s) > i+2 && s[i+1:i+3] == "//"
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return false
}
