//go:build wharftest

package main

import "testing"

func TestPausesParse(t *testing.T) {
	env := func(spec string) func(string) string {
		return func(k string) string {
			if k == envTestPause {
				return spec
			}
			return ""
		}
	}
	if exportTestWrap(env("")) != nil || exportTestWrap(env("bogus:1s")) != nil {
		t.Error("an empty or unknown pause spec wraps the store")
	}
	w := exportTestWrap(env("after-manifest:200ms, part-upload:5ms, part-body:7ms"))
	if w == nil {
		t.Fatal("no wrapper")
	}
	p := w(nil).(*pausingBucket)
	if p.afterManifest.Milliseconds() != 200 || p.upload.Milliseconds() != 5 || p.perMiB.Milliseconds() != 7 || p.afterPart != 0 {
		t.Errorf("parsed %+v", p)
	}
}
