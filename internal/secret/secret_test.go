package secret

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
)

func TestValueNeverPrints(t *testing.T) {
	const planted = "AKIAPLANTED-SECRET-0001"
	v := New(planted)
	type holder struct {
		Key Value `json:"key"`
	}
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("x", "key", v, "h", holder{v})
	slog.New(slog.NewTextHandler(&logs, nil)).Info("x", "key", v)
	js, _ := json.Marshal(holder{v})
	outs := []string{
		fmt.Sprint(v), fmt.Sprintf("%v %+v %#v %s %q %x", v, v, v, v, v, v),
		fmt.Sprintf("%v %+v", holder{v}, &holder{v}), string(js), logs.String(),
	}
	for _, o := range outs {
		if strings.Contains(o, planted) {
			t.Errorf("secret leaked in %q", o)
		}
	}
	if !strings.Contains(string(js), Redacted) {
		t.Errorf("json %s lacks %s", js, Redacted)
	}
	if v.Reveal() != planted {
		t.Error("Reveal")
	}
	if !(Value{}).IsZero() || v.IsZero() {
		t.Error("IsZero")
	}
}

func TestResolveErrors(t *testing.T) {
	_, err := Resolve("secret_access_key", "plain-literal", os.Getenv)
	if !errors.Is(err, ErrLiteral) || strings.Contains(err.Error(), "plain-literal") {
		t.Errorf("literal: %v", err)
	}
	_, err = Resolve("secret_access_key", "env://WHARF_SURELY_UNSET_VARIABLE", os.Getenv)
	if !errors.Is(err, ErrUnbound) || !strings.Contains(err.Error(), "WHARF_SURELY_UNSET_VARIABLE") {
		t.Errorf("unbound: %v", err)
	}
	_, err = Resolve("secret_access_key", "file://relative/path", os.Getenv)
	if !errors.Is(err, ErrUnbound) {
		t.Errorf("relative file: %v", err)
	}
	v, err := Resolve("x", "", os.Getenv)
	if err != nil || !v.IsZero() {
		t.Errorf("empty: %v", err)
	}
}
