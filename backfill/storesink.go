package backfill

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
)

// PartKey is the key of a part, below the destination prefix: id is the Split.PartID of the
// reading it holds (the split's id, unless objects of it were quarantined).
func PartKey(id string) string { return "part-" + id + ".ndjson.zst" }

// StoreSink writes each split's records, whole, as one zstd-compressed part of lines
// (PartKey) with a create-if-absent put: the records of a split are the same on every read
// (each member is pinned) and their encoding is deterministic, so a replayed split rewrites
// the same key with the same bytes, and a part already there with the same records counts as
// written (whether the store refuses the create before or after taking the body). A split
// whose quarantined objects are left out writes the part of the members it read, named by
// their own id (Split.PartID): never the key of a reading with other members. When the job
// ends, the leader writes the dataset contract's manifest.json (format lines: records of any
// bytes) and then _SUCCESS over the parts of the plan, so `wharf validate` certifies the
// output; a job with quarantined objects gets a failed manifest and no _SUCCESS.
type StoreSink struct {
	s       *store.Store
	url     string
	job     string
	version string
	// PartSize bounds the buffers of a part's upload (two of them per split in flight).
	PartSize int64
}

// NewStoreSink returns the sink writing to s (opened at the destination prefix, named url).
// version is the wharf version the manifest records.
func NewStoreSink(s *store.Store, url, job, version string) *StoreSink {
	return &StoreSink{s: s, url: url, job: job, version: version, PartSize: 8 << 20}
}

// URL implements Sink.
func (k *StoreSink) URL() string { return k.url }

// encoderOptions are fixed: the same records always encode to the same bytes.
var encoderOptions = []zstd.EOption{zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault),
	zstd.WithEncoderCRC(true), zstd.WithZeroFrames(true), zstd.WithWindowSize(1 << 20)}

// Open implements Sink: a part is always written from the split's start. A split whose
// every member is quarantined has no part.
func (k *StoreSink) Open(ctx context.Context, sp *Split, _ Watermark, _ Ack) (SplitWriter, Watermark, error) {
	if sp.Left() == 0 {
		return noPart{}, Watermark{}, nil
	}
	w := &partWriter{k: k, key: PartKey(sp.PartID()), raw: sha256.New(), sum: sha256.New(), done: make(chan struct{})}
	pr, pw := io.Pipe()
	w.pw = pw
	enc, err := zstd.NewWriter(io.MultiWriter(&partBody{w: w}, w.sum, &w.size), encoderOptions...)
	if err != nil {
		return nil, Watermark{}, err
	}
	w.enc = enc
	ctx, w.cancel = context.WithCancel(ctx)
	go func() {
		info, err := k.s.Put(ctx, w.key, pr, &store.PutOptions{IfNoneMatch: true, Size: -1,
			ContentType: "application/zstd", PartSize: k.PartSize, Concurrency: 1})
		pr.CloseWithError(errors.Join(err, io.ErrClosedPipe))
		w.res = putResult{info, err}
		close(w.done)
	}()
	return w, Watermark{}, nil
}

// noPart is the writer of a split that has nothing left to read.
type noPart struct{}

func (noPart) Write(_ context.Context, b *Batch) error  { b.recycle(); return nil }
func (noPart) Close(context.Context) (*PartInfo, error) { return nil, nil }
func (noPart) Abort(context.Context)                    {}

// partBody is what the encoder writes to: the pipe into the part's put, until the put ends
// early because the part is already there (a store that refuses a create before it reads
// the body, as the file store does). From then on the records are only hashed, and Close
// compares them with the part's.
type partBody struct {
	w      *partWriter
	exists bool
}

func (b *partBody) Write(p []byte) (int, error) {
	if b.exists {
		return len(p), nil
	}
	n, err := b.w.pw.Write(p)
	if err == nil {
		return n, nil
	}
	<-b.w.done // the pipe broke: the put has ended
	if errors.Is(b.w.res.err, store.ErrPreconditionFailed) {
		b.exists = true
		return len(p), nil
	}
	return n, err
}

type putResult struct {
	info store.ObjectInfo
	err  error
}

type counter int64

func (c *counter) Write(b []byte) (int, error) { *c += counter(len(b)); return len(b), nil }

type partWriter struct {
	k       *StoreSink
	key     string
	enc     *zstd.Encoder
	pw      *io.PipeWriter
	raw     hash.Hash // of the records
	sum     hash.Hash // of the part's bytes
	size    counter
	records int64
	done    chan struct{} // closed when the put ended, with res
	res     putResult
	cancel  context.CancelFunc
}

func (w *partWriter) Write(_ context.Context, b *Batch) error {
	w.raw.Write(b.Data)
	w.records += int64(b.Len())
	_, err := w.enc.Write(b.Data)
	b.recycle()
	if err != nil {
		return w.putErr(err)
	}
	return nil
}

// putErr reports the put's own failure when the pipe broke because of it.
func (w *partWriter) putErr(err error) error {
	w.cancel()
	<-w.done
	if w.res.err != nil {
		err = w.res.err
	}
	return errcode.E("write", w.where(), ErrSink, err)
}

func (w *partWriter) where() string { return fmt.Sprintf("part %s of %s", w.key, w.k.url) }

func (w *partWriter) Close(ctx context.Context) (*PartInfo, error) {
	if err := w.enc.Close(); err != nil {
		return nil, w.putErr(err)
	}
	w.pw.Close()
	<-w.done
	r := w.res
	w.cancel()
	raw := hex.EncodeToString(w.raw.Sum(nil))
	switch {
	case r.err == nil:
		return &PartInfo{Key: w.key, Size: int64(w.size), SHA256: hex.EncodeToString(w.sum.Sum(nil)),
			ETag: r.info.ETag, Records: w.records}, nil
	case errors.Is(r.err, store.ErrPreconditionFailed) || errors.Is(r.err, store.ErrOutcomeUnknown):
		return w.k.verify(ctx, w.key, raw, w.records)
	}
	return nil, errcode.E("write", w.where(), ErrSink, r.err)
}

func (w *partWriter) Abort(context.Context) {
	w.cancel()
	w.pw.CloseWithError(context.Canceled)
	<-w.done
	w.enc.Reset(io.Discard)
}

// verify checks the part already at key: the same records (decompressed sha256) is success,
// other records ErrPartCollision.
func (k *StoreSink) verify(ctx context.Context, key, raw string, records int64) (*PartInfo, error) {
	obj, err := k.s.Get(ctx, key, nil)
	if err != nil {
		return nil, errcode.E("verify", fmt.Sprintf("part %s of %s", key, k.url), ErrSink, err)
	}
	defer obj.Close()
	sum, rawSum := sha256.New(), sha256.New()
	var size counter
	dec := zstdPool.Get().(*zstd.Decoder)
	defer func() { _ = dec.Reset(nil); zstdPool.Put(dec) }()
	err = dec.Reset(io.TeeReader(obj, io.MultiWriter(sum, &size)))
	if err == nil {
		_, err = io.Copy(rawSum, dec)
	}
	got := hex.EncodeToString(rawSum.Sum(nil))
	if err != nil || got != raw {
		why := fmt.Errorf("its records hash to sha256 %s, the split's to %s", got, raw)
		if err != nil {
			why = fmt.Errorf("it is not a readable zstd part: %w", err)
		}
		return nil, errcode.E("write", fmt.Sprintf("part %s of %s", key, k.url), ErrPartCollision, why)
	}
	return &PartInfo{Key: key, Size: int64(size), SHA256: hex.EncodeToString(sum.Sum(nil)), ETag: obj.Info.ETag, Records: records}, nil
}

// RunID is the run id of a plan's output in its manifest.
func RunID(p *Plan) string { return "backfill-" + p.ID[:16] }

// manifestOf is what the store sink's manifest names its job.
func manifestOf(job string) string { return "backfill:" + job }

// Claim refuses a destination that holds the manifest of another dataset — a job or an
// export that read another source: its certificate would be replaced by this job's (and its
// parts left beside this job's), while its status still says it succeeded. A manifest of
// this job (a replan, a leader finishing again), or of a job over the same source (a replay:
// the same records make the same parts), is this job's to replace.
func (k *StoreSink) Claim(ctx context.Context, job, source string) error {
	_, err := k.claim(ctx, job, source)
	return err
}

// claim is Claim, returning the put options that write this job's manifest only over what
// claim read: a create where there was none, a replace of that very object where there was
// one, so that a manifest another writer puts there meanwhile is never written over.
func (k *StoreSink) claim(ctx context.Context, job, source string) (*store.PutOptions, error) {
	where := dataset.ManifestKey + " of " + k.url
	obj, err := k.s.Get(ctx, dataset.ManifestKey, nil)
	switch {
	case errors.Is(err, store.ErrNotExist), errors.Is(err, store.ErrBucketMissing):
		return &store.PutOptions{IfNoneMatch: true}, nil // nothing there: the first write says what it finds
	case err != nil:
		return nil, errcode.E("read", where, ErrSink, err)
	}
	b, err := io.ReadAll(io.LimitReader(obj, 64<<20))
	obj.Close()
	if err != nil {
		return nil, errcode.E("read", where, ErrSink, err)
	}
	opts := &store.PutOptions{IfMatch: obj.Info.ETag}
	m, err := dataset.DecodeManifest(b)
	if err != nil || m.Export == manifestOf(job) || strings.HasPrefix(m.Export, manifestOf("")) && m.Source == source {
		return opts, nil // not a manifest wharf can read (validate says what it is), or this data's own
	}
	return nil, errcode.E("start", "job "+job, ErrJobMismatch,
		fmt.Errorf("%s holds the manifest of %s (run %s) read from %s, another dataset: this job would replace its certificate; give this job a destination of its own", k.url, m.Export, m.RunID, m.Source))
}

// Finish implements Sink: manifest.json, then (when the job succeeded) _SUCCESS. Every
// field is derived from the coordinator's records, so two leaders finishing the same plan
// write the same bytes. A destination that came to hold another dataset's manifest while
// the job ran is not written over (Claim).
func (k *StoreSink) Finish(ctx context.Context, f *Finish) error {
	put, err := k.claim(ctx, f.Plan.Job, f.Plan.Source)
	if err != nil {
		return err
	}
	m := &dataset.Manifest{ManifestVersion: dataset.ManifestVersion, WharfVersion: k.version,
		Export: manifestOf(f.Plan.Job), RunID: RunID(f.Plan), Status: dataset.StatusSucceeded,
		Source: f.Plan.Source, Relation: "prefix", Mode: dataset.ModeFull, Format: dataset.FormatLines,
		ChunkKey: "split", StartedAt: f.Plan.PlannedAt, FinishedAt: f.Finished.UTC(),
		Schema: []dataset.SchemaColumn{}, Parts: []dataset.Part{}}
	m.DurationMS = max(m.FinishedAt.Sub(m.StartedAt).Milliseconds(), 0)
	m.SchemaFingerprint = dataset.SchemaFingerprint(m.Schema)
	for i, st := range f.States {
		if !st.final() || st.Part == nil {
			continue
		}
		p := st.Part
		m.Parts = append(m.Parts, dataset.Part{Key: p.Key, Chunk: i, Rows: p.Records, Size: p.Size, SHA256: p.SHA256, ETag: p.ETag})
		m.Rows += p.Records
		m.Bytes += p.Size
	}
	if f.Error != nil {
		m.Status, m.Error = dataset.StatusFailed, f.Error.Error()
	}
	b, err := m.Encode()
	if err != nil {
		return err
	}
	where := func(key string) string { return key + " of " + k.url }
	if f.Error != nil {
		if err := k.s.Delete(ctx, dataset.SuccessKey, nil); err != nil {
			return errcode.E("write", where(dataset.SuccessKey), ErrSink, err)
		}
	}
	put.Size, put.ContentType = int64(len(b)), "application/json"
	if _, err := k.s.Put(ctx, dataset.ManifestKey, bytes.NewReader(b), put); errors.Is(err, store.ErrPreconditionFailed) {
		return errcode.E("write", where(dataset.ManifestKey), ErrJobMismatch,
			errors.New("another writer put a manifest there while this job finished: it is not written over; give this job a destination of its own"))
	} else if err != nil {
		return errcode.E("write", where(dataset.ManifestKey), ErrSink, err)
	}
	if f.Error != nil {
		return nil
	}
	body := dataset.SuccessBody(b)
	if _, err := k.s.Put(ctx, dataset.SuccessKey, bytes.NewReader(body), &store.PutOptions{Size: int64(len(body)), ContentType: "text/plain"}); err != nil {
		return errcode.E("write", where(dataset.SuccessKey), ErrSink, err)
	}
	return nil
}
