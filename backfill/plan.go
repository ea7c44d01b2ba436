package backfill

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"
)

// planJob lists the prefix once, packs it and publishes the plan: every descriptor and page
// created if absent (a replan of an unchanged prefix writes nothing new), quarantined splits
// of the plan given a fresh attempt budget, then the current record pointed at the plan.
func (j *Job) planJob(ctx context.Context) error {
	objs, err := List(ctx, j.src, j.opt.Prefix)
	if err != nil {
		return fmt.Errorf("list %s: %w", j.cfg.Source, err)
	}
	splits := Pack(objs, j.cfg.SplitBytes, j.cfg.SplitMaxObjects)
	p := newPlan(j.cfg.Job, j.cfg.Source, j.sink.URL(), j.cfg.Node, splits, j.now())
	j.log.Info("listed", "objects", len(objs), "splits", len(splits), "plan", short(p.ID))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for _, s := range splits {
		g.Go(func() error { return j.publishSplit(gctx, s) })
	}
	for i := range p.Pages {
		ids := p.ids[i*pageSize : min((i+1)*pageSize, len(p.ids))]
		g.Go(func() error { return createOnce(gctx, j, keyPage(p.ID, i), ids) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if err := createOnce(ctx, j, keyPlan(p.ID), p); err != nil {
		return err
	}
	return j.point(ctx, p.ID)
}

// createOnce creates key holding v; a record already there (the same plan, written by
// another leader or an earlier run) is left as it is.
func createOnce(ctx context.Context, j *Job, key string, v any) error {
	_, err := putJSON(ctx, j.coord, key, v, "")
	if errors.Is(err, ErrConflict) {
		return nil
	}
	return err
}

// publishSplit writes a split's descriptor and, if it ended with quarantined objects, gives
// them a fresh attempt budget: the split is read again from its first quarantined member
// (a store sink writes its part whole again, with every member).
func (j *Job) publishSplit(ctx context.Context, s *Split) error {
	if err := createOnce(ctx, j, keySplit(s.ID), s); err != nil {
		return err
	}
	var st SplitState
	rev, found, err := getJSON(ctx, j.coord, keyState(s.ID), &st)
	if err != nil || !found || st.Status != StatusQuarantined {
		return err
	}
	from := Watermark{}
	if q := st.quarantined(); len(q) > 0 && q[0] < len(s.Members) {
		from = Watermark{Member: q[0], ETag: s.Members[q[0]].ETag, Records: st.Watermark.Records}
	}
	st.Status, st.Attempts, st.Bad, st.Part, st.Watermark, st.Updated = StatusPending, 0, nil, nil, from, j.now().UTC()
	_, err = putJSON(ctx, j.coord, keyState(s.ID), st, rev)
	if errors.Is(err, ErrConflict) {
		return nil
	}
	return err
}

// point makes plan the job's current plan, running.
func (j *Job) point(ctx context.Context, plan string) error {
	var p Plan
	if _, _, err := getJSON(ctx, j.coord, keyPlan(plan), &p); err != nil {
		return err
	}
	for {
		var cur Current
		rev, _, err := getJSON(ctx, j.coord, keyCurrent, &cur)
		if err != nil {
			return err
		}
		next := Current{Plan: plan, Source: j.cfg.Source, Sink: j.sink.URL(), State: JobRunning, PlannedAt: p.PlannedAt}
		_, err = putJSON(ctx, j.coord, keyCurrent, next, rev)
		if !errors.Is(err, ErrConflict) {
			return err
		}
	}
}

// load reads the plan's header and its pages of split ids.
func (j *Job) load(ctx context.Context, id string) error {
	var p Plan
	_, found, err := getJSON(ctx, j.coord, keyPlan(id), &p)
	if err == nil && !found {
		err = coordErr(j.coord, "get", keyPlan(id), ErrNoRecord)
	}
	if err != nil {
		return err
	}
	for i := range p.Pages {
		var ids []string
		_, found, err := getJSON(ctx, j.coord, keyPage(id, i), &ids)
		if err == nil && !found {
			err = coordErr(j.coord, "get", keyPage(id, i), ErrNoRecord)
		}
		if err != nil {
			return err
		}
		p.ids = append(p.ids, ids...)
	}
	if len(p.ids) != p.Splits || PlanID(p.ids) != p.ID {
		return coordErr(j.coord, "decode", keyPlan(id), fmt.Errorf("its pages hold %d split ids that do not hash to the plan's id", len(p.ids)))
	}
	j.mu.Lock()
	j.plan, j.ids = &p, p.ids
	j.mu.Unlock()
	return nil
}

// descriptor returns split id's descriptor, read once.
func (j *Job) descriptor(ctx context.Context, id string) (*Split, error) {
	if s, ok := j.descs.Load(id); ok {
		return s.(*Split), nil
	}
	var s Split
	_, found, err := getJSON(ctx, j.coord, keySplit(id), &s)
	if err == nil && !found {
		err = coordErr(j.coord, "get", keySplit(id), ErrNoRecord)
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
