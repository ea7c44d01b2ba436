//go:build wharftest

package main

import (
	"context"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/load"
	"github.com/wharfdata/wharf/ship"
	"github.com/wharfdata/wharf/spool"
	"github.com/wharfdata/wharf/store/driver"
)

// This file is built only with the wharftest tag, which scripts/test.sh sets: the hooks that
// let the crash tests pause or SIGKILL the binary at chosen points never ship in a release
// binary (testhooks_off.go stands in for them there, and a test scans a build without the tag).

// exportTestWrap parses WHARF_TEST_EXPORT_PAUSE, a comma-separated list of point:duration:
//
//	part-upload     sleep in the middle of each part's upload (after its first body bytes)
//	part-body       sleep after each MiB of each part's body (spreads a large part's upload
//	                out, so that a kill lands while its multipart upload is open)
//	after-part      sleep after each part is written, before the next one or the manifest
//	before-manifest sleep before manifest.json is written (with state: bucket, after the
//	                run's certificate is committed)
//	after-manifest  sleep after manifest.json is written, before _SUCCESS
//	after-success   sleep after _SUCCESS is written, before the run is journaled
//
// and returns a decorator of the destination's bucket that sleeps at those points, or nil
// when the spec names no known point. It only slows the export down; it changes nothing.
func exportTestWrap(getenv func(string) string) func(driver.Bucket) driver.Bucket {
	p := pausingBucket{}
	for item := range strings.SplitSeq(getenv(envTestPause), ",") {
		name, dur, _ := strings.Cut(strings.TrimSpace(item), ":")
		d, err := time.ParseDuration(dur)
		if err != nil {
			continue
		}
		switch name {
		case "part-upload":
			p.upload = d
		case "part-body":
			p.perMiB = d
		case "after-part":
			p.afterPart = d
		case "after-manifest":
			p.afterManifest = d
		case "before-manifest":
			p.beforeManifest = d
		case "after-success":
			p.afterSuccess = d
		case "after-table-manifests": // an Iceberg commit's manifest list, before its metadata file
			p.afterAvro = d
		case "after-table-metadata": // an Iceberg commit's metadata file, before its version hint
			p.afterMetadata = d
		}
	}
	if p == (pausingBucket{}) {
		return nil
	}
	return func(b driver.Bucket) driver.Bucket { p.Bucket = b; return &p }
}

// pausingBucket sleeps at the configured points of an export's puts. It intercepts Put only:
// every other capability reaches the bucket it wraps.
type pausingBucket struct {
	driver.Bucket
	upload, perMiB, afterPart, afterManifest, beforeManifest, afterSuccess time.Duration
	afterAvro, afterMetadata                                               time.Duration
}

func (p *pausingBucket) Unwrap() driver.Bucket { return p.Bucket }

func (p *pausingBucket) Put(ctx context.Context, key string, body io.Reader, opts *driver.PutOptions) (driver.ObjectInfo, error) {
	name := path.Base(key)
	part := strings.HasPrefix(name, "part-")
	if part && p.upload > 0 {
		body = &slowReader{r: body, d: p.upload}
	}
	if part && p.perMiB > 0 {
		body = &pacedReader{r: body, d: p.perMiB}
	}
	if name == dataset.ManifestKey {
		time.Sleep(p.beforeManifest)
	}
	info, err := p.Bucket.Put(ctx, key, body, opts)
	switch {
	case err != nil:
	case part:
		time.Sleep(p.afterPart)
	case name == dataset.ManifestKey:
		time.Sleep(p.afterManifest)
	case name == dataset.SuccessKey:
		time.Sleep(p.afterSuccess)
	case strings.HasPrefix(name, "snap-") && strings.HasSuffix(name, ".avro"):
		time.Sleep(p.afterAvro)
	case strings.HasSuffix(name, ".metadata.json") && strings.HasSuffix(path.Dir(key), "metadata"):
		time.Sleep(p.afterMetadata)
	}
	return info, err
}

// slowReader sleeps once, after the first bytes of a body have been read.
type slowReader struct {
	r     io.Reader
	d     time.Duration
	slept bool
}

func (s *slowReader) Read(b []byte) (int, error) {
	n, err := s.r.Read(b)
	if n > 0 && !s.slept {
		s.slept = true
		time.Sleep(s.d)
	}
	return n, err
}

// pacedReader sleeps after each MiB read.
type pacedReader struct {
	r    io.Reader
	d    time.Duration
	left int // bytes until the next sleep
}

func (p *pacedReader) Read(b []byte) (int, error) {
	if p.left <= 0 {
		p.left = 1 << 20
	}
	n, err := p.r.Read(b[:min(len(b), p.left)])
	if p.left -= n; p.left <= 0 {
		time.Sleep(p.d)
	}
	return n, err
}

// shipTestWrap parses WHARF_TEST_SHIP for the points that sit in the store rather than in an
// upload:
//
//	kill-after-probe-put  SIGKILL itself once the startup probe's sentinel is written
//
// and returns a decorator of the destination's bucket, or nil without them.
func shipTestWrap(getenv func(string) string) func(driver.Bucket) driver.Bucket {
	spec := getenv(envTestShip)
	var tk tableKiller
	for item := range strings.SplitSeq(spec, ",") {
		name, v, _ := strings.Cut(strings.TrimSpace(item), ":")
		n, _ := strconv.ParseInt(v, 10, 64)
		switch name {
		case "kill-after-table-manifests":
			tk.manifests = n
		case "kill-after-table-metadata":
			tk.metadata = n
		}
	}
	switch {
	case strings.Contains(spec, "kill-after-probe-put"):
		return func(b driver.Bucket) driver.Bucket { return &probeKiller{Bucket: b} }
	case tk.manifests > 0 || tk.metadata > 0:
		return func(b driver.Bucket) driver.Bucket { tk.Bucket = b; return &tk }
	}
	return nil
}

// tableKiller kills the process after the Nth manifest list (snap-*.avro) or the Nth metadata
// file (metadata/vN.metadata.json; the table's creation writes the first) of the Iceberg
// commits of `wharf ship` landed.
type tableKiller struct {
	driver.Bucket
	manifests, metadata int64
	lists, metas        atomic.Int64
}

func (p *tableKiller) Unwrap() driver.Bucket { return p.Bucket }

func (p *tableKiller) Put(ctx context.Context, key string, body io.Reader, opts *driver.PutOptions) (driver.ObjectInfo, error) {
	info, err := p.Bucket.Put(ctx, key, body, opts)
	name := path.Base(key)
	switch {
	case err != nil:
	case strings.HasPrefix(name, "snap-") && strings.HasSuffix(name, ".avro") && p.lists.Add(1) == p.manifests:
		killSelf()
	case strings.HasSuffix(name, ".metadata.json") && path.Base(path.Dir(key)) == "metadata" && p.metas.Add(1) == p.metadata:
		killSelf()
	}
	return info, err
}

// probeKiller kills the process once a put under the probe's prefix has landed, as a crash
// in the middle of the startup probe would.
type probeKiller struct{ driver.Bucket }

func (p *probeKiller) Unwrap() driver.Bucket { return p.Bucket }

func (p *probeKiller) Put(ctx context.Context, key string, body io.Reader, opts *driver.PutOptions) (driver.ObjectInfo, error) {
	info, err := p.Bucket.Put(ctx, key, body, opts)
	if err == nil && strings.Contains(key, "_wharf/probe/") {
		killSelf()
	}
	return info, err
}

// shipTestHooks parses WHARF_TEST_SHIP, a comma-separated list of point:value:
//
//	kill-after-put:N     SIGKILL itself the Nth time an object is in the store but not yet
//	                     recorded in the spool
//	kill-after-record:N  SIGKILL itself the Nth time an upload is recorded, before local
//	                     retention
//	kill-mid-body:N      SIGKILL itself once N bytes of one upload's body were read (aim it
//	                     past the first part of a multipart upload)
//	kill-after-table-manifests:N  SIGKILL itself once the Nth manifest list of an Iceberg
//	                     commit is in the store (its metadata file not yet)
//	kill-after-table-metadata:N   SIGKILL itself once the Nth metadata file of a table is in
//	                     the store (the table's creation writes the first), before the hint
//	pause:D              sleep D after each read of an upload's body (spreads uploads out
//	                     so that a kill at a random time lands inside one)
//
// Without a spec it returns no hooks.
func shipTestHooks(getenv func(string) string) ship.Hooks {
	spec := getenv(envTestShip)
	if spec == "" {
		return ship.Hooks{}
	}
	var afterPut, afterRecord, midBody int64
	var pause time.Duration
	for item := range strings.SplitSeq(spec, ",") {
		name, v, _ := strings.Cut(strings.TrimSpace(item), ":")
		n, _ := strconv.ParseInt(v, 10, 64)
		switch name {
		case "kill-after-put":
			afterPut = n
		case "kill-after-record":
			afterRecord = n
		case "kill-mid-body":
			midBody = n
		case "pause":
			pause, _ = time.ParseDuration(v)
		}
	}
	var puts, records atomic.Int64
	h := ship.Hooks{Point: func(name string, _ spool.File) {
		switch {
		case name == "after-put" && afterPut > 0 && puts.Add(1) == afterPut:
			killSelf()
		case name == "after-record" && afterRecord > 0 && records.Add(1) == afterRecord:
			killSelf()
		}
	}}
	if midBody > 0 || pause > 0 {
		h.Body = func(_ spool.File, r io.Reader) io.Reader {
			hb := &hookedBody{r: r, killAt: midBody, pause: pause}
			if ra, ok := r.(io.ReaderAt); ok {
				// A large file read in place (each part straight from the file) stays so.
				return &hookedBodyAt{hookedBody: hb, ra: ra}
			}
			return hb
		}
	}
	return h
}

// hookedBodyAt is a hookedBody whose body is read in place too: ReadAt counts, pauses and
// kills as Read does.
type hookedBodyAt struct {
	*hookedBody
	ra io.ReaderAt
}

func (b *hookedBodyAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := b.ra.ReadAt(p, off)
	b.after(n)
	return n, err
}

// hookedBody reads an upload's body, pausing after each read and killing the process once
// killAt bytes were read.
type hookedBody struct {
	r      io.Reader
	n      atomic.Int64 // parts read in place are read in parallel
	killAt int64
	pause  time.Duration
}

func (b *hookedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.after(n)
	return n, err
}

func (b *hookedBody) after(n int) {
	if b.killAt > 0 && b.n.Add(int64(n)) >= b.killAt {
		killSelf()
	}
	if b.pause > 0 && n > 0 {
		time.Sleep(b.pause)
	}
}

// killSelf ends the process as a crash would: SIGKILL, no deferred code, no cleanup.
func killSelf() {
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// loadTestPause parses WHARF_TEST_LOAD_PAUSE, after-part:duration, and returns a progress
// callback of `wharf load` that sleeps that long after each part is copied (after the last,
// that is just before the load's transaction publishes and commits), or nil when unset. The
// crash tests SIGKILL the binary in those pauses.
func loadTestPause(getenv func(string) string) func(load.Progress) {
	name, dur, _ := strings.Cut(strings.TrimSpace(getenv(envTestLoad)), ":")
	d, err := time.ParseDuration(dur)
	if name != "after-part" || err != nil {
		return nil
	}
	return func(load.Progress) { time.Sleep(d) }
}
