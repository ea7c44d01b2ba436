package backfill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/wharfdata/wharf/cas"
	"github.com/wharfdata/wharf/lease"
)

// planJob lists the prefix once, packs it and publishes the plan: every descriptor and page
// created if absent (a replan of an unchanged prefix writes nothing new), and the splits that
// prev's plan quarantined given a fresh attempt budget. The caller makes it current.
func (j *Job) planJob(ctx context.Context, prev *Current) (*Plan, error) {
	objs, err := List(ctx, j.src, j.opt.Prefix)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", j.cfg.Source, err)
	}
	splits := Pack(objs, j.cfg.SplitBytes, j.cfg.SplitMaxObjects)
	p := newPlan(j.cfg.Job, j.cfg.Source, j.sink.URL(), j.cfg.Node, splits, j.now())
	j.log.Info("listed", "objects", len(objs), "splits", len(splits), "plan", short(p.ID))
	gen := generation(prev) + 1
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for _, s := range splits {
		g.Go(func() error { return j.publishSplit(gctx, s, prev != nil, gen) })
	}
	for i := range p.Pages {
		ids := p.ids[i*pageSize : min((i+1)*pageSize, len(p.ids))]
		g.Go(func() error { return createOnce(gctx, j.coord, keyPage(p.ID, i), ids) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := createOnce(ctx, j.coord, keyPlan(p.ID), p); err != nil {
		return nil, err
	}
	return p, nil
}

// errNotQuarantined: a split a replan leaves as it is.
var errNotQuarantined = errors.New("not quarantined")

// publishSplit writes a split's descriptor and, on a replan (again), gives a split that
// ended with quarantined objects a fresh attempt budget: it takes the split's lease and
// releases it pending, in one write, to be read again from its first quarantined member (a
// store sink writes its part whole again, with every member), under the new plan's
// generation gen, so that no worker of an earlier plan takes it.
func (j *Job) publishSplit(ctx context.Context, s *Split, again bool, gen int) error {
	if err := createOnce(ctx, j.coord, keySplit(s.ID), s); err != nil || !again {
		return err
	}
	var st SplitState
	h, err := j.leases.AcquireIf(ctx, splitLeaseName(s.ID), func(raw json.RawMessage) error {
		st = SplitState{}
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &st); err != nil {
				return coordErr(j.coord, "decode", lease.LeaseKey(splitLeaseName(s.ID)), err)
			}
		}
		if st.Status != StatusQuarantined {
			return errNotQuarantined
		}
		return nil
	})
	if errors.Is(err, errNotQuarantined) || errors.Is(err, lease.ErrHeld) {
		return nil
	}
	if err != nil {
		return err
	}
	from := Watermark{}
	if q := st.quarantined(); len(q) > 0 && q[0] < len(s.Members) {
		from = Watermark{Member: q[0], ETag: s.Members[q[0]].ETag, Records: st.Watermark.Records}
	}
	st.Status, st.Attempts, st.Bad, st.Part, st.Watermark, st.Updated = StatusPending, 0, nil, nil, from, j.now().UTC()
	st.Generation = gen
	return leaseLost("replan", "split "+short(s.ID), h.ReleaseWith(ctx, st))
}

// load reads cur's plan: its header and its pages of split ids.
func (j *Job) load(ctx context.Context, cur *Current) error {
	p, err := loadPlan(ctx, j.coord, cur.Plan)
	if err != nil {
		return err
	}
	j.mu.Lock()
	j.plan, j.gen, j.ids = p, cur.Generation, p.ids
	j.mu.Unlock()
	return nil
}

// forgetPlan drops what this worker knew of its plan (superseded by a later one).
func (j *Job) forgetPlan() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.plan, j.ids = nil, nil
	j.stat.final = map[string]string{}
}

// loadPlan reads plan id's header and its pages of split ids.
func loadPlan(ctx context.Context, c *Coordinator, id string) (*Plan, error) {
	var p Plan
	found, err := getJSON(ctx, c, keyPlan(id), &p)
	if err == nil && !found {
		err = coordErr(c, "get", keyPlan(id), cas.ErrNoRecord)
	}
	if err != nil {
		return nil, err
	}
	for i := range p.Pages {
		var ids []string
		found, err := getJSON(ctx, c, keyPage(id, i), &ids)
		if err == nil && !found {
			err = coordErr(c, "get", keyPage(id, i), cas.ErrNoRecord)
		}
		if err != nil {
			return nil, err
		}
		p.ids = append(p.ids, ids...)
	}
	if len(p.ids) != p.Splits || PlanID(p.ids) != p.ID {
		return nil, coordErr(c, "decode", keyPlan(id), fmt.Errorf("its pages hold %d split ids that do not hash to the plan's id", len(p.ids)))
	}
	return &p, nil
}

// descriptor returns split id's descriptor, read once.
func (j *Job) descriptor(ctx context.Context, id string) (*Split, error) {
	if s, ok := j.descs.Load(id); ok {
		return s.(*Split), nil
	}
	var s Split
	found, err := getJSON(ctx, j.coord, keySplit(id), &s)
	if err == nil && !found {
		err = coordErr(j.coord, "get", keySplit(id), cas.ErrNoRecord)
	}
	if err != nil {
		return nil, err
	}
	if SplitID(s.Members) != id || s.ID != id {
		return nil, coordErr(j.coord, "decode", keySplit(id), errors.New("its members do not hash to its id"))
	}
	j.descs.Store(id, &s)
	return &s, nil
}
