package azure

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/wharfdata/wharf/internal/crc32c"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
)

// capitalise is what the Go SDK does to a metadata name it reads (net/http's canonical
// header form of x-ms-meta-<name>, minus the prefix).
func capitalise(n string) string {
	if n == "" {
		return n
	}
	return strings.ToUpper(n[:1]) + strings.ToLower(n[1:])
}

func isCSharpIdentifier(n string) bool {
	if n == "" || n[0] >= '0' && n[0] <= '9' {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func TestMetaNameRoundTrip(t *testing.T) {
	cases := map[string]string{
		"wharf-sha256": "wharf_sha256",
		"wharf-put-id": "wharf_put_id",
		"run":          "run",
		"x2":           "x2",
		"a--b":         "a__b",
		"trail-":       "trail_",
		"my_key":       "_my_5fkey",
		"a-_b":         "_a_2d_5fb",
		"a_-b":         "_a_5f_2db",
		"_lead":        "__5flead",
		"Upper":        "__55pper",
		"9lives":       "_9lives",
		"dot.ted":      "_dot_2eted",
	}
	names := map[string]string{}
	for key, want := range cases {
		n := metaName(key)
		if n != want {
			t.Errorf("metaName(%q) = %q, want %q", key, n, want)
		}
		if !isCSharpIdentifier(n) {
			t.Errorf("metaName(%q) = %q is not a C# identifier", key, n)
		}
		if other, dup := names[n]; dup {
			t.Errorf("keys %q and %q share the name %q", key, other, n)
		}
		names[n] = key
		for _, back := range []string{n, capitalise(n), strings.ToUpper(n)} {
			if got := metaKey(back); got != key {
				t.Errorf("metaKey(%q) = %q, want %q", back, got, key)
			}
		}
	}
}

// TestMetaNameExhaustive checks every key of up to 4 characters over an alphabet holding
// letters, digits, '-' and '_': each maps to a distinct C# identifier that maps back.
func TestMetaNameExhaustive(t *testing.T) {
	const alphabet = "ab9-_"
	seen := map[string]string{}
	var walk func(prefix string)
	walk = func(prefix string) {
		if prefix != "" {
			n := metaName(prefix)
			if !isCSharpIdentifier(n) {
				t.Fatalf("metaName(%q) = %q is not a C# identifier", prefix, n)
			}
			if other, dup := seen[n]; dup {
				t.Fatalf("keys %q and %q share the name %q", prefix, other, n)
			}
			seen[n] = prefix
			if got := metaKey(capitalise(n)); got != prefix {
				t.Fatalf("round trip of %q through %q gave %q", prefix, n, got)
			}
		}
		if len(prefix) == 4 {
			return
		}
		for i := 0; i < len(alphabet); i++ {
			walk(prefix + alphabet[i:i+1])
		}
	}
	walk("")
	if len(seen) < 700 {
		t.Fatalf("checked only %d keys", len(seen))
	}
}

// TestForeignMetadataNames: names another tool wrote are read lowercase, '_' as '-', and
// written back as they were.
func TestForeignMetadataNames(t *testing.T) {
	for name, key := range map[string]string{"My_Key": "my-key", "Owner": "owner", "x_y_z": "x-y-z"} {
		if got := metaKey(name); got != key {
			t.Errorf("metaKey(%q) = %q, want %q", name, got, key)
		}
		if got := metaName(key); got != strings.ToLower(name) {
			t.Errorf("metaName(%q) = %q, want %q", key, got, strings.ToLower(name))
		}
	}
}

// TestMetadataOnAzurite writes dashed, doubled-dash and underscore keys through the raw
// Container (below the portable store, whose key and metadata checks admit only the contract's form) and reads them back
// lowercase and decoded, on Head, Get, Copy and a staged (block) upload.
func TestMetadataOnAzurite(t *testing.T) {
	t.Parallel()
	s, c := openAzurite(t, testConfig{Options: Options{PartSize: MinPartSize}})
	ctx := t.Context()
	md := map[string]string{"wharf-sha256": "abc", "a--b": "dd", "trail-": "t", "my_key": "u", "run": "r 1"}
	if _, err := c.Put(ctx, "k", strings.NewReader("v"), &store.PutOptions{Size: 1, Metadata: md}); err != nil {
		t.Fatal(err)
	}
	// check compares the user's metadata; the blob's CRC-32C rides along in wharf-crc32c.
	check := func(what string, info driver.ObjectInfo, body string) {
		t.Helper()
		if want := crc32c.Format(crc32c.Sum([]byte(body))); info.Metadata[store.MetaCRC32C] != want {
			t.Errorf("%s: wharf-crc32c %q, want %s", what, info.Metadata[store.MetaCRC32C], want)
		}
		info.LiftCRC32C()
		if !maps.Equal(info.Metadata, md) {
			t.Errorf("%s: metadata %v, want %v", what, info.Metadata, md)
		}
	}
	info, err := c.Head(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	check("head", info, "v")
	obj, err := c.Get(ctx, "k", &driver.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	obj.Close()
	check("get", obj.Info, "v")
	if _, err := c.Copy(ctx, "k", "copied", &driver.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	info, _ = c.Head(ctx, "copied")
	check("copy", info, "v")
	big := strings.Repeat("x", 2*MinPartSize+5)
	if _, err := c.Put(ctx, "big", strings.NewReader(big), &store.PutOptions{Size: -1, Metadata: md}); err != nil {
		t.Fatal(err)
	}
	info, _ = c.Head(ctx, "big")
	if info.Metadata[store.MetaPutID] == "" {
		t.Error("a staged upload carries no wharf-put-id")
	}
	delete(info.Metadata, store.MetaPutID) // every upload in parts carries one (package upload)
	check("staged upload", info, big)

	// A name written by another tool, with an underscore and capitals.
	_, err = c.blockBlob("foreign").Upload(ctx, streaming.NopCloser(strings.NewReader("f")), &blockblob.UploadOptions{
		Metadata: map[string]*string{"Build_Id": to.Ptr("7")},
	})
	if err != nil {
		t.Fatal(err)
	}
	info, err = s.Head(ctx, "foreign")
	if err != nil || info.Metadata["build-id"] != "7" || len(info.Metadata) != 1 {
		t.Errorf("foreign metadata: %v %v, want build-id=7", info.Metadata, err)
	}
	_, err = s.Copy(ctx, "foreign", "foreign2", &store.PutOptions{Metadata: info.Metadata})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.blob("foreign2").GetProperties(context.Background(), nil)
	if err != nil || p.Metadata["Build_id"] == nil {
		t.Errorf("foreign metadata written back: %v %v, want the name build_id", p.Metadata, err)
	}
}
