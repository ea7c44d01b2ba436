package azure

import (
	"errors"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
)

// TestAnonymous: anonymous access reads and lists a public container, and is refused writes
// and private containers: Azurite answers 403 AuthorizationFailure to both (Azure itself answers
// 404 ResourceNotFound for a private container, which wharf reads as a missing container).
func TestAnonymous(t *testing.T) {
	t.Parallel()
	srv := testenv.Azurite(t)
	keyedStore, keyed := openAzurite(t, testConfig{})
	if _, err := keyedStore.Put(t.Context(), "private/k", strings.NewReader("p"), &store.PutOptions{Size: 1}); err != nil {
		t.Fatal(err)
	}
	anon := relaxed(testConfig{Options: Options{Endpoint: srv.Endpoint, Anonymous: true}})
	private := openURL(t, srv.Account, keyed.container, anon, false)
	_, err := private.Head(t.Context(), "private/k")
	wantForbidden(t, "anonymous head on a private container", err)
	_, err = private.List(t.Context(), nil)
	wantForbidden(t, "anonymous list on a private container", err)

	public := uniqueContainer()
	pc, err := container.NewClientWithSharedKeyCredential(srv.Endpoint+"/"+srv.Account+"/"+public, mustCred(t, srv), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.Create(t.Context(), &container.CreateOptions{Access: to.Ptr(container.PublicAccessTypeContainer)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Delete(t.Context(), nil) })
	keyedPublic := openURL(t, srv.Account, public, relaxed(azuriteConfig(t, srv)), false)
	if _, err := keyedPublic.Put(t.Context(), "k", strings.NewReader("pub"), &store.PutOptions{Size: 3}); err != nil {
		t.Fatal(err)
	}
	s := openURL(t, srv.Account, public, anon, false)
	if got := readAll(t, s, "k"); got != "pub" {
		t.Errorf("anonymous read: %q", got)
	}
	if objs, err := s.ListAll(t.Context(), ""); err != nil || len(objs) != 1 {
		t.Errorf("anonymous list: %v %v", objs, err)
	}
	_, err = s.Head(t.Context(), "absent")
	if !errors.Is(err, store.ErrNotExist) {
		t.Errorf("anonymous head of a missing key: %v, want ErrNotExist", err)
	}
	_, err = s.Put(t.Context(), "w", strings.NewReader("x"), &store.PutOptions{Size: 1})
	wantForbidden(t, "anonymous put", err)
}

func wantForbidden(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, store.ErrForbidden) || !strings.Contains(err.Error(), "anonymous request") {
		t.Errorf("%s: %v, want ErrForbidden saying the request was anonymous", what, err)
	}
}
