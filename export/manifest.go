package export

import (
	"bytes"
	"context"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/store"
)

func schemaColumns(cols []Column) []SchemaColumn {
	out := make([]SchemaColumn, len(cols))
	for i, c := range cols {
		out[i] = SchemaColumn{Name: c.Name, Type: c.Type.String(), Source: c.DBType}
	}
	return out
}

// putManifest writes the manifest, and then, for a succeeded run, _SUCCESS (M1, M2).
func putManifest(ctx context.Context, s *store.Store, m *Manifest) error {
	b, err := m.Encode()
	if err != nil {
		return newErr("manifest", dataset.ManifestKey, ErrWrite, err)
	}
	opts := &store.PutOptions{Size: int64(len(b)), ContentType: "application/json"}
	if _, err := s.Put(ctx, dataset.ManifestKey, bytes.NewReader(b), opts); err != nil {
		return newErr("manifest", dataset.ManifestKey, ErrWrite, explainDiskFull(err, s, dataset.ManifestKey))
	}
	if m.Status != StatusSucceeded {
		return nil
	}
	body := dataset.SuccessBody(b)
	opts = &store.PutOptions{Size: int64(len(body)), ContentType: "text/plain"}
	if _, err := s.Put(ctx, dataset.SuccessKey, bytes.NewReader(body), opts); err != nil {
		return newErr("manifest", dataset.SuccessKey, ErrWrite, explainDiskFull(err, s, dataset.SuccessKey))
	}
	return nil
}
