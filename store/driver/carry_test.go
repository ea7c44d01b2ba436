package driver

import (
	"maps"
	"testing"
)

// TestCarry: a copy keeps each of the source's content type, headers and metadata that its
// options leave unset, field by field; headers go as one; the source's put-id never goes.
func TestCarry(t *testing.T) {
	src := ObjectInfo{
		ContentType: "text/csv",
		Headers:     Headers{CacheControl: "max-age=60", ContentEncoding: "gzip"},
		Metadata:    map[string]string{"origin": "src", MetaPutID: "the-source-write"},
	}
	for _, tc := range []struct {
		name string
		opts PutOptions
		want PutOptions
	}{
		{"nothing given", PutOptions{},
			PutOptions{ContentType: "text/csv", Headers: src.Headers, Metadata: map[string]string{"origin": "src"}}},
		{"one header replaces all four", PutOptions{Headers: Headers{ContentLanguage: "fr"}},
			PutOptions{ContentType: "text/csv", Headers: Headers{ContentLanguage: "fr"}, Metadata: map[string]string{"origin": "src"}}},
		{"empty metadata replaces", PutOptions{ContentType: "a/b", Metadata: map[string]string{}},
			PutOptions{ContentType: "a/b", Headers: src.Headers, Metadata: map[string]string{}}},
	} {
		o := tc.opts
		Carry(&o, src)
		if o.ContentType != tc.want.ContentType || o.Headers != tc.want.Headers || !maps.Equal(o.Metadata, tc.want.Metadata) {
			t.Errorf("%s: %+v, want %+v", tc.name, o, tc.want)
		}
	}
	if src.Metadata[MetaPutID] == "" {
		t.Error("Carry changed the source's metadata")
	}
	only := ObjectInfo{Metadata: map[string]string{MetaPutID: "x"}}
	var o PutOptions
	if Carry(&o, only); o.Metadata != nil {
		t.Errorf("a source with only a put-id gave metadata %v, want none", o.Metadata)
	}
}
