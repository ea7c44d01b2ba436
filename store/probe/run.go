package probe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
)

// localMountTypes are the file systems on which a sentinel run from this machine observes every
// writer: conditional writes there hold for all processes. Anything else (nfs, cifs, fuse…) is
// a network share where another client's writes are invisible to the probe.
var localMountTypes = map[string]bool{
	"ext4": true, "ext3": true, "ext2": true, "xfs": true, "btrfs": true, "zfs": true,
	"tmpfs": true, "overlay": true, "apfs": true, "hfs": true,
}

// Prefix is where the probe writes its sentinel.
const Prefix = "_wharf/probe/"

// Probe writes a sentinel object under Prefix and reports what the store actually does
// with conditional writes, pinned reads, user metadata and listing, and how far the store's
// clock is from the local one. It deletes the sentinel before returning. A forbidden,
// unsupported (501) or transport failure makes the affected capability Inconclusive, never
// Yes. A file store on a network mount type is SingleWriter without a sentinel.
//
// Probe returns an error only when it cannot run at all (a missing bucket, a cancelled ctx).
func Run(ctx context.Context, s *store.Store, opts *Options) (*Result, error) {
	p := &prober{s: s, now: time.Now, res: &Result{Store: s.Describe(), Capabilities: map[string]CapabilityResult{}}}
	if opts != nil && opts.Now != nil {
		p.now = opts.Now
	}
	if opts != nil && opts.Tag != "" {
		if !validTag(opts.Tag) {
			return nil, &store.Error{Op: "probe", Key: opts.Tag, Kind: store.ErrConfig,
				Err: fmt.Errorf("probe tag %q: want 1 to 100 letters, digits, '.', '_' or '-'", opts.Tag)}
		}
		p.tag = opts.Tag
	}
	start := p.now()
	defer func() { p.res.Duration = p.now().Sub(start) }()
	if d := p.res.Store; d.Local() && d.MountType != "" && !localMountTypes[d.MountType] {
		why := fmt.Sprintf("file store on mount type %s: a network share, where another client's writes cannot be observed; no sentinel written", d.MountType)
		for _, c := range Capabilities {
			p.res.Capabilities[c] = CapabilityResult{Verdict: Inconclusive, Evidence: why, Code: ErrInconclusive.Code()}
		}
		p.res.Coordination, p.res.Reason = SingleWriter, why
		return p.res, nil
	}
	if err := p.run(ctx); err != nil {
		return nil, err
	}
	p.decide()
	return p.res, nil
}

type prober struct {
	s   *store.Store
	now func() time.Time
	res *Result
	key string
	tag string
}

func (p *prober) set(c, verdict, format string, a ...any) {
	r := CapabilityResult{Verdict: verdict, Evidence: fmt.Sprintf(format, a...)}
	if verdict == Inconclusive {
		r.Code = ErrInconclusive.Code()
		for _, v := range a {
			if err, ok := v.(error); ok && errcode.NameOf(err) != "" {
				r.Cause = errcode.NameOf(err)
			}
		}
	}
	p.res.Capabilities[c] = r
}

// inconclusive reports whether err is a failure that shows nothing about the capability.
func inconclusive(err error) bool {
	for _, k := range []error{store.ErrForbidden, store.ErrUnsupported, store.ErrUnavailable, store.ErrOutcomeUnknown} {
		if errors.Is(err, k) {
			return true
		}
	}
	return driver.FaultOf(err) != driver.FaultNone
}

func (p *prober) run(ctx context.Context) error {
	id := driver.NewPutID()[:16]
	p.key = Prefix + id
	if p.tag != "" {
		p.key = Prefix + p.tag + "-" + id
	}
	p.res.Sentinel = p.key
	v1 := []byte("wharf probe " + id + " v1")
	md := map[string]string{"wharf-probe": id}

	before := p.now()
	info1, err := p.put(ctx, v1, &store.PutOptions{IfNoneMatch: true, Metadata: md})
	after := p.now()
	switch {
	case driver.IsContext(err) || errors.Is(err, store.ErrBucketMissing):
		return err
	case err != nil && (inconclusive(err) || errors.Is(err, store.ErrPreconditionFailed)):
		for _, c := range Capabilities {
			p.set(c, Inconclusive, "the first create of the sentinel failed: %v", err)
		}
		if errors.Is(err, store.ErrOutcomeUnknown) {
			p.cleanup() // it may have landed; a store that answers again deletes it
		}
		return nil
	case err != nil:
		return err
	}
	defer p.cleanup()

	p.checkMetadata(ctx, id)
	p.checkSkew(ctx, before, after)
	p.checkList(ctx)
	p.checkCreate(ctx)
	cur, ok := p.current(ctx)
	if !ok {
		return ctx.Err()
	}
	etag2 := p.checkReplace(ctx, info1.ETag, cur)
	p.checkPinned(ctx, info1.ETag, etag2)
	p.checkDelete(ctx, info1.ETag)
	p.checkChecksums(ctx)
	return ctx.Err()
}

// checkChecksums asks a store whose puts send their CRC-32C whether the server refuses a
// body that does not match it, with a put beside the sentinel (deleted after). A store that
// sends none reports nothing.
func (p *prober) checkChecksums(ctx context.Context) {
	checked, evidence, err := p.s.CheckChecksums(ctx, p.key+"-checksum")
	switch {
	case errors.Is(err, store.ErrUnsupported):
	case err != nil:
		p.set(CapChecksums, Inconclusive, "the put with a wrong CRC-32C failed without showing a check: %v", err)
	case checked:
		p.set(CapChecksums, Yes, "%s", evidence)
	default:
		p.set(CapChecksums, No, "%s", evidence)
	}
}

func (p *prober) put(ctx context.Context, body []byte, o *store.PutOptions) (store.ObjectInfo, error) {
	o.Size = int64(len(body))
	o.ContentType = "text/plain"
	return p.s.Put(ctx, p.key, bytes.NewReader(body), o)
}

func (p *prober) current(ctx context.Context) (store.ObjectInfo, bool) {
	info, err := p.s.Head(ctx, p.key)
	return info, err == nil
}

// cleanup deletes the sentinel and, with a tag, the sentinels earlier probes with that tag
// left behind. It runs on a context of its own, so that a probe cancelled at its end still
// deletes what it wrote.
func (p *prober) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = p.s.Delete(ctx, p.key, nil)
	if p.tag == "" {
		return
	}
	for o, err := range p.s.Walk(ctx, Prefix+p.tag+"-") {
		if err != nil {
			return
		}
		id := strings.TrimPrefix(o.Key, Prefix+p.tag+"-")
		if o.Key != p.key && len(id) == 16 && isHex(id) && p.s.Delete(ctx, o.Key, nil) == nil {
			p.res.Swept++
		}
	}
}

func isHex(s string) bool {
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// validTag reports whether tag is usable in a sentinel's key.
func validTag(tag string) bool {
	if len(tag) == 0 || len(tag) > 100 {
		return false
	}
	for _, c := range tag {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func (p *prober) checkMetadata(ctx context.Context, id string) {
	info, err := p.s.Head(ctx, p.key)
	switch {
	case err != nil:
		p.set(CapUserMetadata, Inconclusive, "head of the sentinel failed: %v", err)
	case info.Metadata["wharf-probe"] == id:
		p.set(CapUserMetadata, Yes, "wrote wharf-probe=%s, read it back on head", id)
	default:
		p.set(CapUserMetadata, No, "wrote wharf-probe=%s, head returned %q", id, info.Metadata["wharf-probe"])
	}
}

func (p *prober) checkSkew(ctx context.Context, before, after time.Time) {
	info, err := p.s.Head(ctx, p.key)
	if err != nil || info.LastModified.IsZero() {
		return
	}
	// LastModified has one-second resolution: compare with the midpoint of the write.
	mid := before.Add(after.Sub(before) / 2)
	skew := info.LastModified.Sub(mid).Seconds()
	if math.Abs(skew) < 1.5 {
		skew = 0
	}
	p.res.ClockSkewSeconds = math.Round(skew)
	if math.Abs(skew) > 300 {
		p.res.ClockSkewWarning = fmt.Sprintf("the store's clock is %+.0f s from the local clock (%s): sync the local clock (NTP); leases and retention judge time by it",
			skew, mid.UTC().Format(time.RFC3339))
	}
}

func (p *prober) checkList(ctx context.Context) {
	page, err := p.s.List(ctx, &store.ListOptions{Prefix: p.key})
	if err != nil {
		p.set(CapListAfterWrite, Inconclusive, "list failed: %v", err)
		return
	}
	for _, o := range page.Objects {
		if o.Key == p.key {
			p.set(CapListAfterWrite, Yes, "the fresh sentinel was listed at once")
			return
		}
	}
	p.set(CapListAfterWrite, No, "the fresh sentinel was not in a listing made right after its put")
}

func (p *prober) checkCreate(ctx context.Context) {
	_, err := p.put(ctx, []byte("wharf probe: second create must fail"), &store.PutOptions{IfNoneMatch: true})
	switch {
	case errors.Is(err, store.ErrPreconditionFailed):
		p.set(CapConditionalCreate, Yes, "a second create-if-absent on the sentinel was refused (%s)", answer(err))
	case err == nil:
		p.set(CapConditionalCreate, No, "a second create-if-absent on the sentinel succeeded and overwrote it")
	default:
		p.set(CapConditionalCreate, Inconclusive, "the second create failed without showing the condition: %v", err)
	}
}

// checkReplace replaces the sentinel under If-Match with its current ETag, then tries a stale
// If-Match. It returns the ETag after the replace ("" when it failed).
func (p *prober) checkReplace(ctx context.Context, stale string, cur store.ObjectInfo) string {
	v2 := []byte("wharf probe v2 " + driver.NewPutID())
	info2, err := p.put(ctx, v2, &store.PutOptions{IfMatch: cur.ETag})
	switch {
	case errors.Is(err, store.ErrPreconditionFailed):
		p.set(CapConditionalReplace, No, "a put with the current ETag was refused (%s)", answer(err))
		return ""
	case err != nil:
		p.set(CapConditionalReplace, Inconclusive, "the put with the current ETag failed: %v", err)
		return ""
	}
	if stale == info2.ETag || stale == cur.ETag {
		// The first create was overwritten by an unenforced second create: make a stale ETag
		// of the current one by replacing once more.
		stale = info2.ETag
		info3, err := p.put(ctx, []byte("wharf probe v2b "+driver.NewPutID()), &store.PutOptions{IfMatch: info2.ETag})
		if err != nil {
			p.set(CapConditionalReplace, Inconclusive, "a second replace failed: %v", err)
			return ""
		}
		info2, v2 = info3, nil
	}
	_, err = p.put(ctx, []byte("wharf probe: stale replace must fail"), &store.PutOptions{IfMatch: stale})
	switch {
	case errors.Is(err, store.ErrPreconditionFailed):
		if v2 != nil && !p.holds(ctx, v2) {
			p.set(CapConditionalReplace, No, "a stale If-Match put was answered %s but the content changed", answer(err))
			return info2.ETag
		}
		p.set(CapConditionalReplace, Yes, "the current ETag replaced; a stale ETag was refused (%s)", answer(err))
	case err == nil:
		p.set(CapConditionalReplace, No, "a put with a stale ETag succeeded and overwrote the sentinel")
		if cur, ok := p.current(ctx); ok {
			return cur.ETag
		}
	default:
		p.set(CapConditionalReplace, Inconclusive, "the stale If-Match put failed without showing the condition: %v", err)
	}
	return info2.ETag
}

// holds reports whether the sentinel's content is want.
func (p *prober) holds(ctx context.Context, want []byte) bool {
	obj, err := p.s.Get(ctx, p.key, nil)
	if err != nil {
		return false
	}
	defer obj.Close()
	got, err := io.ReadAll(obj)
	return err == nil && bytes.Equal(got, want)
}

func (p *prober) checkPinned(ctx context.Context, stale, current string) {
	if current == "" || stale == current {
		p.set(CapPinnedRead, Inconclusive, "no overwrite to read across")
		return
	}
	obj, err := p.s.Get(ctx, p.key, &store.GetOptions{IfMatch: stale})
	switch {
	case errors.Is(err, store.ErrPreconditionFailed):
		p.set(CapPinnedRead, Yes, "a read pinned to a superseded ETag was refused (%s)", answer(err))
	case err == nil:
		obj.Close()
		p.set(CapPinnedRead, No, "a read pinned to a superseded ETag returned the object (ETag %s): the pin is ignored; wharf compares the returned ETag instead", obj.Info.ETag)
	default:
		p.set(CapPinnedRead, Inconclusive, "the pinned read failed without showing the condition: %v", err)
	}
}

func (p *prober) checkDelete(ctx context.Context, stale string) {
	err := p.s.Delete(ctx, p.key, &store.DeleteOptions{IfMatch: stale})
	switch {
	case errors.Is(err, store.ErrPreconditionFailed):
		if _, ok := p.current(ctx); !ok {
			p.set(CapConditionalDelete, No, "a delete with a stale ETag was answered %s but deleted the object", answer(err))
			return
		}
		p.set(CapConditionalDelete, Yes, "a delete with a stale ETag was refused (%s)", answer(err))
	case err == nil:
		if _, ok := p.current(ctx); ok {
			p.set(CapConditionalDelete, Inconclusive, "a delete with a stale ETag answered success but the object is still there")
			return
		}
		p.set(CapConditionalDelete, No, "a delete with a stale ETag deleted the object")
	default:
		p.set(CapConditionalDelete, Inconclusive, "the stale conditional delete failed without showing the condition: %v", err)
	}
}

func (p *prober) decide() {
	c := p.res.Capabilities
	create, replace := c[CapConditionalCreate].Verdict, c[CapConditionalReplace].Verdict
	if create == Yes && replace == Yes {
		p.res.Coordination = CAS
		p.res.Reason = "conditional create and conditional replace are enforced"
		return
	}
	var missing []string
	if create != Yes {
		missing = append(missing, "conditional create "+create)
	}
	if replace != Yes {
		missing = append(missing, "conditional replace "+replace)
	}
	p.res.Coordination = SingleWriter
	p.res.Reason = "not proven: " + strings.Join(missing, ", ")
}

// answer describes how the store refused: "HTTP 412 PreconditionFailed".
func answer(err error) string {
	var e *store.Error
	if errors.As(err, &e) && e.Status != 0 {
		if e.Reason != "" {
			return fmt.Sprintf("HTTP %d %s", e.Status, e.Reason)
		}
		return fmt.Sprintf("HTTP %d", e.Status)
	}
	return errcode.NameOf(err)
}
