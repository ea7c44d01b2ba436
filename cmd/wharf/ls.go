package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wharfdata/wharf/internal/textfmt"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/transfer"
)

func (a *app) lsCommand() *cobra.Command {
	var recursive, human bool
	var filter transfer.Filter
	cmd := &cobra.Command{
		Use:   "ls URL",
		Short: "List objects and prefixes under a URL",
		Long: `List what is under a URL, in key order, following every page of the listing.

Without -r, ls shows one level, like 'aws s3 ls': keys are rolled up at the next '/' and
each such common prefix is shown as "PRE name/". Names are shown relative to the last '/'
of the URL's path, so 's3://b/logs/' shows "2024/" and 's3://b/logs' shows "logs/".
With -r (--recursive), ls shows every key under the URL, each as its full key. A key with a
wildcard ('s3://b/logs/2024-*/*.gz': *, ?, [a-z], * matching across '/') shows every key
below the prefix before the wildcard that matches the rest, as -r does; --include and
--exclude (with -r or a wildcard) choose among the names below the URL's last '/', in the
order given, the last match deciding.

Pretty output has one line per entry: last-modified (UTC), size in bytes (with -H, in
KiB, MiB, GiB…), name.
JSON output (--format json) is NDJSON, one JSON object per line, so a long listing
streams: an object is {"key":…,"size":…,"etag":…,"last_modified":…}, a common prefix
is {"prefix":"name/"}.

A URL that names no bucket (s3://, gs://, az://account/) lists the buckets the credentials
can see, with their creation time where the store keeps one; --format json prints
{"name":…,"created":…} per bucket.

A URL whose bucket does not exist fails with WHARF_BUCKET_MISSING: it is never shown as
empty. A prefix with nothing under it prints nothing and exits 0.`,
		Example: `  wharf ls ./examples/data
  wharf ls -r ./examples/data
  wharf ls -rH ./examples/data
  wharf ls s3://
  wharf ls s3://my-bucket/logs/2024/
  wharf ls -r --format json s3://my-bucket/logs/ | jq -r .key`,
		Args: args(1, 1, "one URL"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			f := filterOf(&filter)
			if f != nil && !recursive && !hasWildcard(argv[0]) {
				return usageErr(errors.New("ls: --include and --exclude choose among every key under the URL: add -r"))
			}
			return a.ls(cmd.Context(), argv[0], recursive, human, f)
		},
	}
	filterFlags(cmd.Flags(), &filter)
	cmd.Flags().BoolVarP(&recursive, "recursive", "r", false, "list every key under the URL, not one level")
	cmd.Flags().BoolVarP(&human, "human-readable", "H", false, "sizes in KiB, MiB, GiB… instead of bytes (pretty output)")
	return cmd
}

func (a *app) ls(ctx context.Context, raw string, recursive, human bool, f *transfer.Filter) error {
	if at, ok := a.bucketsAt(raw); ok {
		return a.lsBuckets(ctx, raw, at)
	}
	loc, s, err := a.openList(ctx, raw)
	if err != nil {
		return err
	}
	defer s.Close()
	var takes func(string) bool
	if wild := transfer.HasWildcard(loc.Key); wild || f != nil {
		// Every key below the wildcard's prefix (or under the URL) that the wildcard and the
		// filter take, given its name below that prefix (or the URL's last '/').
		recursive = true
		tree := loc
		if !wild {
			tree.Key = tree.Key[:strings.LastIndexByte(tree.Key, '/')+1]
		}
		inner, err := treeOf(&tree, f) // splits the wildcard off: tree.Key is its prefix
		if err != nil {
			return err
		}
		if wild {
			loc.Key = tree.Key
		}
		takes = func(key string) bool { return inner == nil || inner(strings.TrimPrefix(key, tree.Key)) }
	}
	opts := store.ListOptions{Prefix: loc.Key}
	base := ""
	if !recursive {
		opts.Delimiter = "/"
		base = loc.Key[:strings.LastIndexByte(loc.Key, '/')+1]
	}
	w := bufio.NewWriter(a.out)
	for {
		page, err := s.List(ctx, &opts)
		if err != nil {
			return fmt.Errorf("%s: %w", raw, err)
		}
		if takes != nil {
			page.Objects = slices.DeleteFunc(page.Objects, func(o store.ObjectInfo) bool { return !takes(o.Key) })
		}
		if err := a.writePage(w, page, base, human); err != nil {
			return err
		}
		if err := w.Flush(); err != nil || page.Next == "" {
			return err
		}
		opts.Token = page.Next
	}
}

// writePage writes one page of a listing: its common prefixes, then its objects, with base
// trimmed from every name.
func (a *app) writePage(w io.Writer, page store.Page, base string, human bool) error {
	for _, p := range page.Prefixes {
		var err error
		if a.format == "json" {
			err = writeJSON(w, lsPrefix{Prefix: p})
		} else {
			_, err = fmt.Fprintln(w, lsPrefixLine(strings.TrimPrefix(p, base)))
		}
		if err != nil {
			return err
		}
	}
	for _, o := range page.Objects {
		var err error
		if a.format == "json" {
			err = writeJSON(w, o)
		} else {
			_, err = fmt.Fprintln(w, lsLine(o, strings.TrimPrefix(o.Key, base), human))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// bucketsAt reports whether raw names a place above the buckets: scheme:// alone (s3://,
// gs://, or a named store's), or scheme://account/ for a store whose URLs begin with an
// account (az://, r2://).
func (a *app) bucketsAt(raw string) (store.Location, bool) {
	scheme, rest, ok := driver.SplitScheme(raw)
	if !ok {
		return store.Location{}, false
	}
	rest = strings.TrimSuffix(rest, "/")
	if rest == "" {
		return store.Location{Scheme: scheme}, true
	}
	if strings.Contains(rest, "/") {
		return store.Location{}, false
	}
	below, err := a.parseURL(scheme + "://" + rest + "/bucket/")
	if err != nil || below.Account != rest {
		return store.Location{}, false // rest is a bucket
	}
	return store.Location{Scheme: scheme, Account: rest}, true
}

// lsBuckets lists the buckets at at.
func (a *app) lsBuckets(ctx context.Context, raw string, at store.Location) error {
	buckets, err := store.ListBuckets(ctx, at, a.storeConfig(nil))
	if err != nil {
		return fmt.Errorf("%s: %w", raw, err)
	}
	w := bufio.NewWriter(a.out)
	for _, b := range buckets {
		if a.format == "json" {
			err = writeJSON(w, b)
		} else {
			_, err = fmt.Fprintf(w, "%19s %s\n", textfmt.Time(b.Created), b.Name)
		}
		if err != nil {
			return err
		}
	}
	return w.Flush()
}
