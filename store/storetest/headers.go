package storetest

import (
	"bytes"
	"compress/gzip"
	"maps"
	"testing"

	"github.com/wharfdata/wharf/store"
)

// What the header cases write: a gzip body labelled as such, a content type, the four standard
// headers and user metadata; and what a copy that replaces them gives instead.
var (
	headersWritten = store.Headers{
		CacheControl:       "public, max-age=3600",
		ContentDisposition: `attachment; filename="orders.csv.gz"`,
		ContentEncoding:    "gzip",
		ContentLanguage:    "de-CH",
	}
	// headersReplaced replaces all four: two set anew, two removed.
	headersReplaced = store.Headers{CacheControl: "no-store", ContentLanguage: "fr"}
	mdWritten       = map[string]string{"origin": "headers"}
	mdReplaced      = map[string]string{"origin": "replaced", "wharf-node": "n2"}
)

const (
	typeWritten  = "text/csv"
	typeReplaced = "application/x-ndjson"
)

// testHeaders: an object's content type, standard headers (Cache-Control,
// Content-Disposition, Content-Encoding, Content-Language) and metadata come back from Head
// and Get as written, on a put in one request and in parts, and every copy keeps them —
// store.Copy (server-side where the backend can), a conditional Copy, store.CopyStream to
// another store — while what a copy's options give replaces them, field by field. The body is
// real gzip and is read back byte for byte: nothing on the way may transcode it.
func (su *suite) testHeaders(t *testing.T) {
	t.Run("RoundTrip", su.testHeadersRoundTrip)
	t.Run("Large", su.testHeadersLarge)
	t.Run("Copy", su.testHeadersCopy)
	t.Run("CopyIfNoneMatch", su.testHeadersCopyIfNoneMatch)
	t.Run("CopyStream", su.testHeadersCopyStream)
	t.Run("CopyReplaces", su.testHeadersCopyReplaces)
}

func (su *suite) testHeadersRoundTrip(t *testing.T) {
	s := su.open(t)
	data := gzipped(t, 10_000, 21)
	putWithHeaders(t, s, "obj.csv.gz", data)
	su.wantAttrs(t, s, "obj.csv.gz", data, typeWritten, headersWritten, mdWritten, "put")
}

// testHeadersLarge: a body of unknown size over one part goes up in parts (S3's
// CreateMultipartUpload, Azure's Put Block List, a GCS resumable upload) with its headers.
func (su *suite) testHeadersLarge(t *testing.T) {
	if !su.h.Large {
		t.Skipf("%s: Harness.Large is off", su.h.Name)
	}
	s := su.open(t)
	data := gzipped(t, int(su.h.PartSize)+1000, 22) // random data: gzip makes it a little larger
	_, err := s.Put(t.Context(), "large.gz", onlyReader{bytes.NewReader(data)}, &store.PutOptions{
		Size: -1, PartSize: su.h.PartSize, Concurrency: 2,
		ContentType: typeWritten, Headers: headersWritten, Metadata: mdWritten,
	})
	if err != nil {
		t.Fatalf("large put with headers: %v", err)
	}
	su.wantAttrs(t, s, "large.gz", data, typeWritten, headersWritten, mdWritten, "put in parts")
}

func (su *suite) testHeadersCopy(t *testing.T) {
	s := su.open(t)
	data := gzipped(t, 10_000, 23)
	putWithHeaders(t, s, "src.gz", data)
	if _, err := s.Copy(t.Context(), "src.gz", "dir/dst.gz", nil); err != nil {
		t.Fatalf("copy: %v", err)
	}
	su.wantAttrs(t, s, "dir/dst.gz", data, typeWritten, headersWritten, mdWritten, "copy")
}

// testHeadersCopyIfNoneMatch: a conditional copy keeps them too (the condition must not make
// the copy replace what it does not give).
func (su *suite) testHeadersCopyIfNoneMatch(t *testing.T) {
	s := su.open(t)
	data := gzipped(t, 10_000, 24)
	putWithHeaders(t, s, "src.gz", data)
	if _, err := s.Copy(t.Context(), "src.gz", "dst.gz", &store.PutOptions{IfNoneMatch: true}); err != nil {
		t.Fatalf("conditional copy: %v", err)
	}
	su.wantAttrs(t, s, "dst.gz", data, typeWritten, headersWritten, mdWritten, "conditional copy")
}

// testHeadersCopyStream: a copy between two stores (through Get and Put) keeps them.
func (su *suite) testHeadersCopyStream(t *testing.T) {
	from := su.open(t)
	to := su.h.Open(t)
	data := gzipped(t, 10_000, 25)
	putWithHeaders(t, from, "src.gz", data)
	if _, err := store.CopyStream(t.Context(), from, "src.gz", to, "dst.gz", nil); err != nil {
		t.Fatalf("copy to another store: %v", err)
	}
	su.wantAttrs(t, to, "dst.gz", data, typeWritten, headersWritten, mdWritten, "copy to another store")
}

// testHeadersCopyReplaces: headers given to a copy replace all four of the source's, keeping
// its content type and metadata; a content type or metadata given replaces only itself.
func (su *suite) testHeadersCopyReplaces(t *testing.T) {
	s := su.open(t)
	other := su.h.Open(t)
	data := gzipped(t, 10_000, 26)
	putWithHeaders(t, s, "src.gz", data)
	for _, tc := range []struct {
		name  string
		opts  store.PutOptions
		ctype string
		h     store.Headers
		md    map[string]string
	}{
		{"headers", store.PutOptions{Headers: headersReplaced}, typeWritten, headersReplaced, mdWritten},
		{"type", store.PutOptions{ContentType: typeReplaced}, typeReplaced, headersWritten, mdWritten},
		{"metadata", store.PutOptions{Metadata: mdReplaced}, typeWritten, headersWritten, mdReplaced},
		{"all", store.PutOptions{ContentType: typeReplaced, Headers: headersReplaced, Metadata: mdReplaced},
			typeReplaced, headersReplaced, mdReplaced},
	} {
		o := tc.opts
		if _, err := s.Copy(t.Context(), "src.gz", "copy-"+tc.name, &o); err != nil {
			t.Fatalf("copy giving %s: %v", tc.name, err)
		}
		su.wantAttrs(t, s, "copy-"+tc.name, data, tc.ctype, tc.h, tc.md, "copy giving "+tc.name)
		o = tc.opts
		if _, err := store.CopyStream(t.Context(), s, "src.gz", other, "copy-"+tc.name, &o); err != nil {
			t.Fatalf("copy to another store giving %s: %v", tc.name, err)
		}
		su.wantAttrs(t, other, "copy-"+tc.name, data, tc.ctype, tc.h, tc.md, "copy to another store giving "+tc.name)
	}
}

// gzipped returns n bytes of seeded random data, gzip-compressed: a body that a client or
// server transcoding Content-Encoding: gzip would change.
func gzipped(t *testing.T, n int, seed uint64) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(randomBytes(n, seed)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// putWithHeaders puts data at key with the content type, headers and metadata of the header
// cases.
func putWithHeaders(t *testing.T, s *store.Store, key string, data []byte) {
	t.Helper()
	putBytes(t, s, key, data, &store.PutOptions{ContentType: typeWritten, Headers: headersWritten, Metadata: mdWritten})
}

// wantAttrs fails t unless key holds exactly data and Head and Get both report the content
// type, headers and metadata given (a wharf-put-id aside: uploads in parts add one).
func (su *suite) wantAttrs(t *testing.T, s *store.Store, key string, data []byte, ctype string, h store.Headers, md map[string]string, what string) {
	t.Helper()
	check := func(how string, info store.ObjectInfo) {
		t.Helper()
		if info.ContentType != ctype {
			t.Errorf("%s: %s %q: content type %q, want %q", what, how, key, info.ContentType, ctype)
		}
		if info.Headers != h {
			t.Errorf("%s: %s %q: headers\n\t%+v\nwant\n\t%+v", what, how, key, info.Headers, h)
		}
		got := maps.Clone(info.Metadata)
		delete(got, store.MetaPutID)
		if !maps.Equal(got, md) {
			t.Errorf("%s: %s %q: metadata %v, want %v", what, how, key, info.Metadata, md)
		}
	}
	check("get", wantContent(t, s, key, data, what))
	check("head", mustHead(t, s, key))
}
