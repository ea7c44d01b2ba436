package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wharfdata/wharf/iceberg"
)

func (a *app) tableCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "table",
		Short: "Apache Iceberg tables whose catalog is the bucket",
		Long: `Commands for Apache Iceberg tables kept at a store location with no catalog server: each
version of a table is a metadata file, metadata/vN.metadata.json, that wharf creates only if
absent, so of two writers exactly one makes each version (docs/iceberg.md).`,
	}
	cmd.AddCommand(a.tableShowCommand())
	return cmd
}

func (a *app) tableShowCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "show URL|METADATA_FILE",
		Short: "Show an Iceberg table: its schema, snapshots and current data files",
		Long: `Read the Iceberg table at URL (its location: the folder that holds metadata/) and show
where it is, the version of its metadata, its current schema (field ids, names, types), every
snapshot oldest first (id, parent, time, operation, what it added and deleted) and the data
files of the current snapshot with their records and sizes. It reads only: the current
version is found from metadata/version-hint.text and checked upward, or by a listing of
metadata/. Given a metadata file instead (…/metadata/00003-<uuid>.metadata.json, as a
table a SQL catalog keeps names its versions; an export with iceberg.catalog prints it), it
shows that version.

JSON output (--format json) is one object: {"location","version","format_version","uuid",
"current_snapshot_id","schema":[{"id","name","type","required"}],"snapshots":[{"id",
"parent_id","sequence_number","time","operation","summary"}],"data_files":[{"path",
"records","bytes"}]}. No table at URL is WHARF_ICEBERG_NO_TABLE (exit 1).`,
		Example: `  wharf table show s3://lake/orders/
  wharf table show --format json ./warehouse/events | jq '.snapshots | length'
  wharf table show s3://lake/orders/metadata/00003-0f5c….metadata.json`,
		Args: args(1, 1, "the table's location URL, or one of its metadata files"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.tableShow(cmd.Context(), argv[0])
		},
	}
}

func (a *app) tableShow(ctx context.Context, raw string) error {
	loc, file, isFile := strings.Cut(raw, "/metadata/")
	isFile = isFile && strings.HasSuffix(file, ".metadata.json") && !strings.Contains(file, "/")
	if !isFile {
		loc = raw
	}
	s, err := a.openURL(ctx, loc)
	if err != nil {
		return err
	}
	defer s.Close()
	var t *iceberg.Table
	if isFile {
		t, err = iceberg.LoadFile(ctx, s, "metadata/"+file)
	} else {
		t, err = iceberg.Load(ctx, s, nil)
	}
	if err != nil {
		return err
	}
	d, err := t.Describe(ctx)
	if err != nil {
		return err
	}
	return a.show(d, d.WriteText)
}
