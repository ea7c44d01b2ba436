package export

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// definitionVersion names the set of fields and their encoding: a change to either changes
// every fingerprint, so that a resume never compares definitions encoded differently.
const definitionVersion = "wharf-export-definition/1"

// Definition is what decides the rows and bytes of an export's run, as the journal keeps it
// beside the run: a digest of each field (never the value itself, so that no part of a source
// URL or a query is copied into the journal), and a fingerprint of them all. A resume
// continues only the run whose definition is the export's now.
//
// Its fields are the config keys source (as the run connects to it: sourceOf), table, query, chunk_key, mode, cursor_column,
// format, invalid_utf8, time_units and infinity. The others decide how a run goes, not which
// rows or bytes it writes: chunk_rows (a resume keeps the ranges journaled, and plans the rest
// after them), consistency (recorded in the manifest, run by run), delta_wait (the delta window
// is journaled), destination (a resume writes at the prefix its run started at), store,
// password, validate, superseded and demo.
type Definition struct {
	Fingerprint string            `json:"fingerprint"` // "sha256:" and the hex sha256 of Fields
	Fields      map[string]string `json:"fields"`      // config key → hex sha256 of its value
}

// definitionOf returns the definition of e, checked (its defaults filled).
func definitionOf(e *Export) Definition {
	units := make([]string, 0, len(e.TimeUnits))
	for _, col := range slices.Sorted(maps.Keys(e.TimeUnits)) {
		units = append(units, col+"\x00"+string(e.TimeUnits[col]))
	}
	values := map[string]string{
		"source": sourceOf(e.Source), "table": e.Table, "query": strings.TrimSpace(e.Query), "chunk_key": e.ChunkKey,
		"mode": string(e.Mode), "cursor_column": e.CursorColumn, "format": string(e.Format),
		"invalid_utf8": string(e.InvalidUTF8), "infinity": string(e.Infinity),
		"time_units": strings.Join(units, "\x01"),
	}
	d := Definition{Fields: make(map[string]string, len(values))}
	all := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(values)) {
		sum := sha256.Sum256([]byte(definitionVersion + "\x00" + k + "\x00" + values[k]))
		d.Fields[k] = hex.EncodeToString(sum[:])
		fmt.Fprintf(all, "%s=%s\n", k, d.Fields[k])
	}
	d.Fingerprint = "sha256:" + hex.EncodeToString(all.Sum(nil))
	return d
}

// sourceOf is the source as a run connects to it. A PostgreSQL URL is what it resolves to
// with the environment, as the connection is made (pgx.ParseConfig, which fills what the URL
// leaves out from PGHOST, PGPORT, PGDATABASE, PGUSER, PGOPTIONS and a service file, as libpq
// does): its servers, database, user and session settings but the application's name. So a
// resume whose environment points the same URL at another database, or at another schema's
// table through a search_path, is not taken for the same source. A URL that does not parse is
// as written (the run fails to open it); so is a SQLite URL, whose path the config made
// absolute.
func sourceOf(src string) string {
	if !strings.HasPrefix(src, "postgres://") && !strings.HasPrefix(src, "postgresql://") {
		return src
	}
	cfg, err := pgx.ParseConfig(src)
	if err != nil {
		return src
	}
	var b strings.Builder
	fmt.Fprintf(&b, "postgres\x00database=%s\x00user=%s", cfg.Database, cfg.User)
	seen := map[string]bool{}
	for _, h := range append([]string{fmt.Sprintf("%s:%d", cfg.Host, cfg.Port)}, fallbackHosts(cfg)...) {
		if !seen[h] { // sslmode prefer tries each host twice, with TLS and without
			seen[h] = true
			fmt.Fprintf(&b, "\x00host=%s", h)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.RuntimeParams)) {
		if k != "application_name" {
			fmt.Fprintf(&b, "\x00%s=%s", k, cfg.RuntimeParams[k])
		}
	}
	return b.String()
}

func fallbackHosts(cfg *pgx.ConnConfig) []string {
	out := make([]string, 0, len(cfg.Fallbacks))
	for _, f := range cfg.Fallbacks {
		out = append(out, fmt.Sprintf("%s:%d", f.Host, f.Port))
	}
	return out
}

// changed returns the fields whose digests differ between d and was, sorted; every field
// when was is nil (a run journaled without its definition cannot be shown to be the same).
func (d Definition) changed(was *Definition) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(d.Fields)) {
		if was == nil || was.Fields[k] != d.Fields[k] {
			out = append(out, k)
		}
	}
	return out
}

// sameDefinition refuses to resume prev when the export's definition is not the one journaled
// with it (ErrDefinitionChanged, naming the fields that changed): the kept chunk plan, parts
// and schema belong to that definition, and mixing them with another's gives a dataset that is
// neither. Nothing has been opened or written when it refuses.
func (r *runner) sameDefinition(ctx context.Context, prev *RunRecord) error {
	was, err := r.j.RunDefinition(ctx, prev.RunID)
	if err != nil {
		return err
	}
	if was != nil && was.Fingerprint == r.def.Fingerprint {
		return nil
	}
	why := "the run was journaled without its definition (by an earlier wharf), so it cannot be shown to be this export"
	if was != nil {
		why = "the keys that differ: " + strings.Join(r.def.changed(was), ", ")
	}
	return newErr("resume", "run "+prev.RunID, ErrDefinitionChanged, fmt.Errorf(
		"%s; a resume continues only the export its run started as: run without --resume to export it as now defined "+
			"(a new run), or restore the config to resume", why))
}
