package export

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	_ "github.com/wharfdata/wharf/store/s3" // the endpoint case opens an s3:// destination
)

// TestConfigErrorsJournalAndWriteNothing: a configuration error (the CLI's exit 2: nothing was
// attempted) is not journaled as a run and writes no failed manifest, even on a fresh prefix;
// a source that cannot be reached is journaled and leaves a failed manifest there (M4).
func TestConfigErrorsJournalAndWriteNothing(t *testing.T) {
	cases := []struct {
		name string
		edit func(e *Export)
		kind error
	}{
		{"a chunk key that is text", func(e *Export) { e.ChunkKey = "name" }, ErrChunkKey},
		{"a time unit for no such column", func(e *Export) { e.TimeUnits = map[string]TimeUnit{"nope": UnitSeconds} }, ErrConfig},
		{"a plaintext endpoint off loopback", func(e *Export) {
			e.Destination = "s3://bucket/x/"
			e.Store = store.Config{Set: []store.Setting{{Name: "endpoint", Value: "http://example.com"}, {Name: "anonymous", Value: "true"}}}
		}, driver.ErrEndpointInsecure},
		{"an unbound password", func(e *Export) {
			e.Source, e.Password = "postgres://u@127.0.0.1:1/db", "env://WHARF_TEST_SURELY_UNSET_PW"
		}, store.ErrCredentialUnbound},
		{"a password in the source URL", func(e *Export) { e.Source = "postgres://u:pw@127.0.0.1:1/db" }, store.ErrCredentialLiteral},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, 10, 5)
			c.edit(&f.exp)
			_, err := f.run(t, f.opts())
			if !errors.Is(err, c.kind) || !ConfigError(err) {
				t.Fatalf("err = %v, want %v", err, c.kind)
			}
			if runs := journaled(t, f.state); len(runs) != 0 {
				t.Errorf("journaled %+v", runs)
			}
			if _, err := os.Stat(f.prefix()); !os.IsNotExist(err) {
				t.Errorf("the prefix was written: %v", snapshot(t, f.prefix()))
			}
		})
	}
	t.Run("an unreachable source is journaled", func(t *testing.T) {
		f := newFixture(t, 10, 5)
		f.exp.Source = "sqlite://" + filepath.Join(t.TempDir(), "missing.db")
		if _, err := f.run(t, f.opts()); !errors.Is(err, ErrSourceUnavailable) || ConfigError(err) {
			t.Fatalf("err = %v", err)
		}
		if runs := journaled(t, f.state); len(runs) != 1 || runs[0].Status != StatusFailed {
			t.Errorf("journal: %+v", runs)
		}
		if _, err := os.Stat(filepath.Join(f.prefix(), dataset.ManifestKey)); err != nil {
			t.Errorf("no failed manifest on the fresh prefix: %v", err)
		}
	})
}

func journaled(t *testing.T, state string) []RunRecord {
	t.Helper()
	j, err := OpenJournal(context.Background(), state)
	must(t, err)
	defer j.Close()
	runs, err := j.Runs(context.Background(), "", 0)
	must(t, err)
	return runs
}

// TestKilledRunAbandonedWhenALaterRunStarts: a run left "running" by a killed process is
// marked abandoned in the journal when a later run of the export starts; a resume continues
// such a run instead, and leaves other exports' runs alone.
func TestKilledRunAbandonedWhenALaterRunStarts(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 10, 5)
	j, err := OpenJournal(ctx, f.state)
	must(t, err)
	for _, r := range []RunRecord{
		{RunID: "20200101T000000Z-aaaaaa", Export: f.exp.Name, Prefix: "file://" + f.prefix() + "/", StartedAt: time.Now().Add(-2 * time.Hour)},
		{RunID: "20200101T000000Z-bbbbbb", Export: "other", Prefix: "file:///x/", StartedAt: time.Now().Add(-time.Hour)},
	} {
		must(t, j.StartRun(ctx, &r)) // as a killed process leaves them
	}
	j.Close()
	res := f.mustRun(t)
	runs := journaled(t, f.state)
	status := map[string]string{}
	for _, r := range runs {
		status[r.RunID] = r.Status
	}
	if status["20200101T000000Z-aaaaaa"] != StatusAbandoned || status["20200101T000000Z-bbbbbb"] != StatusRunning ||
		status[res.RunID] != StatusSucceeded {
		t.Errorf("journal: %v", status)
	}
}

// TestPostgresConnectErrorIsOneLine: a refused login is one line naming the host, the user
// and the server's answer, without pgx's per-attempt lines or the TLS attempt's refusal
// (sslmode=prefer tries TLS first).
func TestPostgresConnectErrorIsOneLine(t *testing.T) {
	srv := testenv.Postgres(t)
	if srv.Password == "" {
		t.Skip("the server uses trust authentication")
	}
	pw := filepath.Join(t.TempDir(), "pw")
	must(t, os.WriteFile(pw, []byte("wrong-password"), 0o600))
	e := Export{Name: "pg", Source: srv.URL, Password: "file://" + pw, Table: "t", ChunkKey: "id",
		Destination: "file://" + t.TempDir() + "/"}
	_, err := Run(context.Background(), e, Options{StatePath: filepath.Join(t.TempDir(), "state.db")})
	msg := err.Error()
	if !errors.Is(err, ErrSourceUnavailable) || strings.ContainsAny(msg, "\n\t") || strings.Contains(msg, "tls error") ||
		!strings.Contains(msg, "password authentication failed") || !strings.Contains(msg, "127.0.0.1") {
		t.Errorf("err = %q", msg)
	}
}
