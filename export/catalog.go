package export

import (
	"context"
	"strings"

	"github.com/wharfdata/wharf/iceberg"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/probe"
)

// The namespace a table gets in a catalog when its iceberg: section gives none (its name is
// the export's).
const defaultNamespace = "default"

// tableIdent is e's table's name in its catalog: TableConfig.Namespace and Name, by default
// "default" and the export's name.
func (e *Export) tableIdent() iceberg.Ident {
	id := iceberg.Ident{Namespace: e.Iceberg.Namespace, Name: e.Iceberg.Name}
	if id.Namespace == "" {
		id.Namespace = defaultNamespace
	}
	if id.Name == "" {
		id.Name = e.Name
	}
	return id
}

// checkCatalog validates the catalog: and the names given for it.
func (e *Export) checkCatalog(bad func(field, format string, a ...any) error) error {
	t := e.Iceberg
	if t.Catalog == nil {
		if t.Namespace != "" || t.Name != "" {
			return bad("iceberg", "namespace and name name the table in a catalog: give iceberg.catalog, or leave them out (a table the bucket keeps is named by its location)")
		}
		return nil
	}
	if err := t.Catalog.Check("iceberg.catalog"); err != nil {
		return bad("iceberg.catalog", "%v", err)
	}
	for field, v := range map[string]string{"iceberg.namespace": t.Namespace, "iceberg.name": t.Name} {
		if len(v) > 255 || strings.ContainsAny(v, "\x00\n") {
			return bad(field, "%q: want at most 255 characters, on one line", v)
		}
	}
	return nil
}

// tableOptions opens what e's table needs before it is loaded: its catalog (the caller
// closes it), or else the proof that st enforces conditional writes (the bucket is the
// catalog).
func tableOptions(ctx context.Context, e *Export, st *store.Store, getenv func(string) string, verdicts *probe.Verdicts) (*iceberg.Options, *iceberg.Catalog, error) {
	if e.Iceberg.Catalog != nil {
		cat, err := iceberg.OpenCatalog(ctx, e.Iceberg.Catalog, getenv)
		if err != nil {
			return nil, nil, err
		}
		return &iceberg.Options{Catalog: cat, Ident: e.tableIdent()}, cat, nil
	}
	res, err := verdicts.Coordination(ctx, st)
	if err == nil {
		err = res.RequireCAS()
	}
	return nil, nil, err
}

// metadataIfCataloged is the location of tbl's metadata file when a catalog keeps it.
func metadataIfCataloged(cat *iceberg.Catalog, tbl *iceberg.Table) string {
	if cat == nil {
		return ""
	}
	return tbl.MetadataLocation()
}
