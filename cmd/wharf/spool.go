package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wharfdata/wharf/internal/textfmt"
	"github.com/wharfdata/wharf/spool"
)

func (a *app) spoolCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "spool",
		Short: "Make a spool and add finished files to it, for 'wharf ship' to upload",
		Long: `A spool is the directory between the programs that produce files and 'wharf ship',
the service that uploads them. A file enters it finished and durable: it is moved (or copied)
into tmp/, hashed with sha256, fsynced, renamed into ready/<dataset>/, and recorded in an
append-only catalog (catalog.log) with the spool's next sequence numbers. 'wharf ship' owns
the spool while it runs (ship.lock holds its PID), uploads each file once under a
deterministic key, records the upload, and only then may delete the local file.

Producers add files at any time, from any number of processes, while the service runs.
docs/ship.md describes the layout, the catalog and what survives a crash.`,
		Example: `  wharf spool init ./spool
  wharf spool add --spool ./spool --dataset events out/events-0001.ndjson
  wharf spool status --spool ./spool`,
		Args: args(0, 0, "a subcommand: init, add or status"),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(a.spoolInitCommand(), a.spoolAddCommand(), a.spoolStatusCommand())
	return cmd
}

func (a *app) spoolInitCommand() *cobra.Command {
	var replay string
	cmd := &cobra.Command{
		Use:   "init [--replay ID] DIR",
		Short: "Make a new, empty spool",
		Long: `Make DIR a new, empty spool: spool.json (format version, the spool's epoch, creation
time), ready/, tmp/, an empty catalog.log and ship.lock. DIR is created if it does not exist.

The epoch is a random 64-bit number made once, here; every object key 'wharf ship' writes
carries it, so a spool made again after its directory was wiped never collides with the
objects the old one shipped. That is why init never resets a spool: on one it fails with
WHARF_SPOOL_EXISTS, and on a non-empty directory that is not a spool with
WHARF_SPOOL_INVALID.

With --replay ID it makes a replay spool, for a replay: files shipped again (a re-processed
range, say), which must never land beside production's. 'wharf ship --replay ID' ships it,
keying every object under wharf/replays/ID/; 'wharf ship' without --replay (or with another
id) refuses it (WHARF_REPLAY_INTO_PRODUCTION, WHARF_REPLAY_MISMATCH). A replay spool is
format 2, which a wharf from before replays refuses to open.

With --format json it prints {"dir","format","epoch","created"} (and "replay").`,
		Example: `  wharf spool init /var/lib/wharf/spool
  wharf spool init ./spool --format json
  wharf spool init --replay reprocess-2026-11 ./replay-spool`,
		Args: args(1, 1, "the spool directory"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.spoolInit(argv[0], replay)
		},
	}
	cmd.Flags().StringVar(&replay, "replay", "", "make a replay spool for the replay ID (shipped only by 'wharf ship --replay ID', under wharf/replays/ID/)")
	return cmd
}

// spoolInfo is `spool init`'s JSON output.
type spoolInfo struct {
	Dir     string    `json:"dir"`
	Format  int       `json:"format"`
	Epoch   string    `json:"epoch"`
	Created time.Time `json:"created"`
	Replay  string    `json:"replay,omitempty"`
}

func (a *app) spoolInit(dir, replay string) error {
	if replay != "" && spool.ValidateReplay(replay) != nil {
		return usageErr(fmt.Errorf("spool init: --replay %q: want 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit", replay))
	}
	info, err := spool.InitWith(dir, spool.InitOptions{Replay: replay})
	if err != nil {
		return err
	}
	switch {
	case a.format == "json":
		return writeJSON(a.out, spoolInfo{info.Dir, info.Format, info.EpochHex(), info.Created, info.Replay})
	case a.quiet:
		return nil
	}
	shown := displayPath(info.Dir)
	kind, ship := "spool", ""
	if info.Replay != "" {
		kind = "replay spool"
		ship = fmt.Sprintf("\n  ship it:    wharf ship --spool %s --replay %s … (keys under wharf/replays/%s/)", shown, info.Replay, info.Replay)
	}
	_, err = fmt.Fprintf(a.out, "made %s %s (epoch %s)\n  add files:  wharf spool add --spool %s --dataset NAME FILE…\n  status:     wharf spool status --spool %s%s\n",
		kind, shown, info.EpochHex(), shown, shown, ship)
	return err
}

type spoolAddFlags struct {
	spool, dataset, time, ext string
	copy                      bool
	records                   uint64
	// clockSynced is --clock-synced; clockGiven says it was given (otherwise the kernel is
	// asked).
	clockSynced, clockGiven bool
}

func (a *app) spoolAddCommand() *cobra.Command {
	var f spoolAddFlags
	cmd := &cobra.Command{
		Use:   "add --spool DIR --dataset NAME [--time T] [--clock-synced=BOOL] [--copy] FILE…",
		Short: "Move (or copy) finished files into a spool",
		Long: `Add each FILE, in order, to the spool: move it in (or, with --copy, copy it and keep
it), hash it with sha256, fsync it, rename it into ready/<dataset>/, fsync the directory,
and append a finalized and then an eligible record to the catalog, each fsynced. Only
then is a moved FILE removed: a crash at any point leaves each file either spooled or
where it was. Moving a file on the spool's file system is a hard link, no copy; a move
from another file system is a copy, and the source is removed after it is recorded.

Each file gets the spool's next sequence numbers, first to last (--records of them,
default 1), unique across every process adding at the same time. Its name in the spool,
ready/<dataset>/<first:020>_<last:020>.<ext>, and its event time (--time, default the
file's modification time, in UTC), which picks its date=/hour= partition, make its
object key.

Each file also records whether the clock was synchronized (to NTP or PTP) when it was
added: on Linux the kernel says (adjtimex: synchronized unless STA_UNSYNC is set or the
maximum error is over 1 s); --clock-synced=false or =true says it for the producer, as it
must on other systems (where the state is recorded unknown). 'wharf ship' keys a file whose
clock was not synchronized under unsynced/ instead of date=/hour=: its time cannot say
which partition it belongs to.

Add only finished files: a file that changes while it is added is refused. The
extension is the file's own (ndjson; ndjson.gz for a compressed one; bin when it has
none), unless --ext gives it. Dataset names are 1 to 64 of a-z, 0-9, _ and -.

Every file is checked before the first is added. A failure stops at that file: the files
before it are spooled, it and the ones after are left as they were. A move retried after
a crash spools a file once; a copy (or a move across file systems) retried after a crash
may spool it twice.

Output: a line per file; with --format json, one object per file: the spooled file
({"id","dataset","path","name","size","sha256","first","last","time","ext","clock",
"state","added"}) and "source".`,
		Example: `  wharf spool add --spool ./spool --dataset events out/events-0001.ndjson
  wharf spool add --spool ./spool --dataset events --copy --records 5000 batch.ndjson.gz
  wharf spool add --spool ./spool --dataset metrics --time 2026-03-04T05:00:00Z m1.parquet m2.parquet`,
		Args: func(c *cobra.Command, argv []string) error {
			if len(argv) == 0 {
				return usageErr(fmt.Errorf("spool add: want one or more files (see '%s --help')", c.CommandPath()))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, argv []string) error {
			f.clockGiven = cmd.Flags().Changed("clock-synced")
			return a.spoolAdd(cmd.Context(), f, argv)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.spool, "spool", "", "the spool directory (required)")
	fl.StringVar(&f.dataset, "dataset", "", "the files' dataset (required): 1 to 64 of a-z, 0-9, _ and -")
	fl.StringVar(&f.time, "time", "", "the files' event time, RFC 3339 (default: each file's modification time)")
	fl.BoolVar(&f.copy, "copy", false, "copy the files and keep them (default: move them in)")
	fl.Uint64Var(&f.records, "records", 1, "sequence numbers each file carries (its record count)")
	fl.StringVar(&f.ext, "ext", "", "the extension to spool the files with (default: their own)")
	fl.BoolVar(&f.clockSynced, "clock-synced", false, "whether the clock that gave the event time was synchronized (default: ask the kernel; unsynchronized files ship under unsynced/)")
	return cmd
}

// spoolAdded is `spool add`'s JSON output: one per file.
type spoolAdded struct {
	spool.File
	Source string `json:"source"`
}

func (a *app) spoolAdd(ctx context.Context, f spoolAddFlags, files []string) error {
	opts, err := f.options()
	if err != nil {
		return err
	}
	opts.Logger = a.log
	return spool.AddAll(ctx, f.spool, files, opts, func(file spool.File, src string) error {
		return a.printAdded(file, src, f.copy)
	})
}

// options checks the flags of `spool add`: a mistake in them is a usage error.
func (f spoolAddFlags) options() (spool.AddOptions, error) {
	opts := spool.AddOptions{Dataset: f.dataset, Copy: f.copy, Records: f.records, Ext: strings.ToLower(f.ext)}
	switch {
	case f.spool == "":
		return opts, usageErr(errors.New("spool add: --spool DIR is required (make one with 'wharf spool init DIR')"))
	case f.dataset == "":
		return opts, usageErr(errors.New("spool add: --dataset NAME is required"))
	case f.records == 0:
		return opts, usageErr(errors.New("spool add: --records 0: a file carries at least 1"))
	}
	if spool.ValidateDataset(f.dataset) != nil {
		return opts, usageErr(fmt.Errorf("spool add: --dataset %q: want 1 to 64 of a-z, 0-9, _ and -", f.dataset))
	}
	if f.time != "" {
		t, err := time.Parse(time.RFC3339Nano, f.time)
		if err != nil {
			return opts, usageErr(fmt.Errorf("spool add: --time %q: want RFC 3339, such as 2026-03-04T05:06:07Z", f.time))
		}
		if t.IsZero() {
			// The zero time is "no time given" to spool.Add, and no catalog holds it: taking
			// the file's modification time instead would file it under another partition.
			return opts, usageErr(fmt.Errorf("spool add: --time %q is the zero time, which the spool reads as no time at all: give the files' event time, or leave --time out for each file's modification time", f.time))
		}
		opts.Time = t
	}
	if f.clockGiven {
		opts.Clock = spool.ClockUnsynced
		if f.clockSynced {
			opts.Clock = spool.ClockSynced
		}
	}
	return opts, nil
}

func (a *app) printAdded(f spool.File, src string, copied bool) error {
	how, clock := "moved", ""
	if copied {
		how = "copied"
	}
	if f.Clock == spool.ClockUnsynced {
		clock = ", clock unsynced: ships under unsynced/"
	}
	return a.say(spoolAdded{File: f, Source: src}, "%s %s -> %s (%s, sequence %d-%d, sha256 %s…%s)",
		how, src, f.Name, textfmt.Size(f.Size), f.First, f.Last, f.SHA256[:12], clock)
}

func (a *app) spoolStatusCommand() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "status --spool DIR",
		Short: "Show a spool's files by state, its backlog and its owner",
		Long: `Show what the spool at DIR holds: files and bytes in each state (eligible files wait
for their upload; uploaded ones are kept until local retention removes them; deleted ones
were removed), the next sequence number, the oldest file waiting and how long it has
waited, and whether a process owns the spool (a running 'wharf ship') and its PID.

status only reads: it takes no ownership and changes nothing, so it runs beside the
service. A damaged catalog fails with WHARF_SPOOL_CORRUPT naming the line; a torn last
line (an append a crash interrupted) is shown as a warning.

With --format json it prints one object: {"dir","format","epoch","created",
"next_sequence","files":{"finalized","eligible","uploaded","deleted"} (each {"files","bytes"}),
"catalog_records","oldest_pending","oldest_pending_age_seconds","owner":{"held","pid","lock"},
"warnings"}.`,
		Example: `  wharf spool status --spool ./spool
  wharf spool status --spool ./spool --format json | jq .files.eligible`,
		Args: args(0, 0, "no arguments (give the spool with --spool DIR)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return usageErr(errors.New("spool status: --spool DIR is required"))
			}
			return a.spoolStatus(dir)
		},
	}
	cmd.Flags().StringVar(&dir, "spool", "", "the spool directory (required)")
	return cmd
}

func (a *app) spoolStatus(dir string) error {
	st, err := spool.ReadStatus(dir)
	if err != nil {
		return err
	}
	return a.show(st, st.WriteText)
}
