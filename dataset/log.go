package dataset

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/wharfdata/wharf/lease"
	"github.com/wharfdata/wharf/store"
)

// ProblemNotLogged: the manifest says it is logged, and its commit log does not record it.
const ProblemNotLogged = "not_logged"

// LogKind is the kind of the entries of an export's commit log, the log a manifest's LogRef
// names.
const LogKind = "export"

// logEntry is what Validate reads of an entry of an export's commit log: the certificate of
// a succeeded run's manifest (export's journal entry holds more).
type logEntry struct {
	Certifies *struct {
		RunID          string `json:"run_id"`
		ManifestSHA256 string `json:"manifest_sha256"`
	} `json:"certifies,omitempty"`
	// Runs are the runs the entry journals (checkNotRevoked reads the head's).
	Runs []struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
		Error  string `json:"error"`
	} `json:"runs"`
}

// LogOpener opens the store at the root URL of a commit log, for Validate to check a logged
// manifest.
type LogOpener func(ctx context.Context, root string) (*store.Store, error)

// StoreOpener opens log roots with cfg (the destination's store options).
func StoreOpener(cfg *store.Config) LogOpener {
	return func(ctx context.Context, root string) (*store.Store, error) { return store.Open(ctx, root, cfg) }
}

// checkLog adds ProblemNotLogged unless the log that m names records m: the entry its LogRef
// names is committed (readable from the lease record) and certifies this run with the sha256 of
// body. An error means the log could not be read.
func (v *Validation) checkLog(ctx context.Context, m *Manifest, body []byte, open []LogOpener) error {
	ref := m.Log
	if ref == nil {
		return nil
	}
	if len(open) == 0 || open[0] == nil {
		v.add(ProblemNotLogged, ManifestKey, "the manifest is logged in %s, which was not checked", ref.Root)
		return nil
	}
	s, err := open[0](ctx, ref.Root)
	if err != nil {
		return err
	}
	defer s.Close()
	e, ok, err := lease.OpenLog(s, ref.Name).Committed(ctx, ref.Seq, ref.Fence)
	if err != nil {
		return err
	}
	where := fmt.Sprintf("entry %d of fence %d in the log %s of %s", ref.Seq, ref.Fence, ref.Name, ref.Root)
	if !ok {
		v.add(ProblemNotLogged, ManifestKey, "the log does not record this manifest (%s is not committed: its writer was fenced past, or never committed)", where)
		return nil
	}
	var st logEntry
	if err := json.Unmarshal(e.Data, &st); err != nil || e.Kind != LogKind {
		v.add(ProblemNotLogged, ManifestKey, "%s is not an export's journal entry (kind %q)", where, e.Kind)
		return nil
	}
	sum := sha256.Sum256(body)
	want := hex.EncodeToString(sum[:])
	switch c := st.Certifies; {
	case c == nil || c.RunID != m.RunID:
		v.add(ProblemNotLogged, ManifestKey, "%s does not certify run %s", where, m.RunID)
		return nil
	case c.ManifestSHA256 != want:
		v.add(ProblemNotLogged, ManifestKey, "%s certifies a manifest with sha256 %s, this one hashes to %s", where, c.ManifestSHA256, want)
		return nil
	}
	return v.checkNotRevoked(ctx, lease.OpenLog(s, ref.Name), ref.Name, m, e.Seq)
}

// checkNotRevoked adds ProblemNotLogged when an entry after the certifying one (seq) records
// m's run as not succeeded: the next holder found the run's prefix without this manifest and
// journaled it failed (settle), so a manifest that lands there later — a paused holder's put
// in flight — is not trusted, whatever the entry it names says.
func (v *Validation) checkNotRevoked(ctx context.Context, g *lease.Log, name string, m *Manifest, seq int64) error {
	head, err := g.Head(ctx, LogKind)
	if err != nil || head == nil || head.Seq == seq {
		return err
	}
	var st logEntry
	if json.Unmarshal(head.Data, &st) != nil {
		return nil // not a journal: checkLog judged the entry it names
	}
	for _, r := range st.Runs {
		if r.RunID == m.RunID && r.Status != StatusSucceeded {
			v.add(ProblemNotLogged, ManifestKey, "entry %d of the log %s records run %s as %s since it certified it: %s", head.Seq, name, m.RunID, r.Status, r.Error)
		}
	}
	return nil
}
