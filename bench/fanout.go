package main

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/sqsbatch"
)

// fanDelay is how long the fan-out receiver takes to answer.
const fanDelay = 100 * time.Millisecond

// sectionFanout hands batches of 10 and 100 webhooks to herald's processor,
// every one answered after 100 ms by a local TLS receiver, at the default
// concurrency, at the old default of 10 and one record at a time, and
// against a receiver offering HTTP/2, and prints wall time / 100 ms and the
// new connections the timed batch opened. The default rows and the batch of
// 10 one at a time run twice, without the store's table and with the store
// on (storeOn), timed in turns, so that what the store adds is a
// difference within each turn.
func sectionFanout(ctx context.Context, o opts, r *results) error {
	load0 := loadAvg()
	awsCfg, err := app.AWSConfig(ctx)
	if err != nil {
		return err
	}
	storeName, err := o.sectionStoreTable()
	if err != nil {
		return err
	}
	delay, large := o.receiverDelay(), o.largeBatch()
	h1 := newReceiver(delay)
	defer h1.Close()
	h2 := startReceiver(delay, true)
	defer h2.Close()
	type run struct {
		n, conc int // conc 0: the default
		h2      bool
		label   string
		store   bool
	}
	def := fmt.Sprintf("default (%d)", sqsbatch.DefaultConcurrency)
	seq := "1 (one at a time)"
	// Each group's runs are timed in turns.
	groups := [][]run{
		{{10, 0, false, def, false}, {10, 0, false, def, true}},
		{{10, 1, false, seq, false}, {10, 1, false, seq, true}},
		{{large, 0, false, def, false}, {large, 0, false, def, true}},
		{{large, 0, true, def + ", HTTP/2 receiver", false}},
		{{large, 10, false, "10 (the old default)", false}},
		{{large, 1, false, seq, false}},
	}
	if o.quick {
		groups = groups[:5]
	}
	var rows [][]string
	missed := false
	for gi, g := range groups {
		procs := make([]*processor.Processor, len(g))
		for j, ru := range g {
			rcv := h1
			if ru.h2 {
				rcv = h2
			}
			env := map[string]string{}
			if ru.conc > 0 {
				env["HERALD_CONCURRENCY"] = fmt.Sprint(ru.conc)
			}
			if ru.store {
				env = withEnv(env, storeOn.env(storeName))
			}
			if procs[j], err = deliverer(awsCfg, rcv, env); err != nil {
				return err
			}
			// One batch first to open the connections (and, with the
			// store, to read the origin's health and keys), as a warm
			// Lambda has.
			if _, err := timeHandle(ctx, procs[j], webhookEvent(fmt.Sprintf("warm-%s-%d-%d", runTag(8), gi, j), ru.n, 0, rcv.URL(), 1)); err != nil {
				return err
			}
		}
		reps := o.reps
		if g[0].conc == 1 && g[0].n == large {
			reps = 1
		}
		ds := make([][]time.Duration, len(g))
		conns := make([][]float64, len(g))
		for i := range reps {
			for t := range g {
				j := turn(i, t, len(g))
				ru := g[j]
				rcv := h1
				if ru.h2 {
					rcv = h2
				}
				before, posts := rcv.conns.Load(), rcv.count.Load()
				d, err := timeHandle(ctx, procs[j], webhookEvent(fmt.Sprintf("fan%d-%d-%v-%v-%s-%d", ru.n, ru.conc, ru.h2, ru.store, runTag(8), i), ru.n, 0, rcv.URL(), 1))
				if err != nil {
					return err
				}
				// Every record POSTed: none settled unsent as a duplicate.
				if sent := rcv.count.Load() - posts; sent != int64(ru.n) {
					return fmt.Errorf("batch of %d (%s): %d POSTs", ru.n, ru.label, sent)
				}
				ds[j], conns[j] = append(ds[j], d), append(conns[j], float64(rcv.conns.Load()-before))
			}
		}
		for j, ru := range g {
			d := median(ds[j])
			ideal := float64(d) / float64(delay)
			goal, v, added := "–", "–", "–"
			label := ru.label
			if ru.store {
				label += ", store on"
				added = addedRange(pairedDiffs(ds[0], ds[j]))
			}
			switch {
			case ru.conc == 0 && !ru.h2:
				goal, v = "≤ 1.2", verdict(ideal, 1.2, false)
				missed = missed || (ru.n == large && !ru.store && v == "MISSED")
			}
			switch {
			case ru.n == 10 && ru.conc == 0 && !ru.store:
				r.fan10 = d
			case ru.n == 10 && ru.conc == 0:
				r.fan10Store, r.fanAdded10 = d, pairedDiffs(ds[0], ds[j])
			case ru.n == 10 && ru.conc == 1 && !ru.store:
				r.fan10Seq = d
			case ru.n == 10 && ru.conc == 1:
				r.fan10SeqStore = d
			case ru.n == large && ru.conc == 0 && !ru.h2 && !ru.store:
				r.fan100 = d
			case ru.n == large && ru.conc == 0 && !ru.h2:
				r.fan100Store, r.fanAdded100 = d, pairedDiffs(ds[0], ds[j])
			}
			speed := "–"
			if ru.conc != 1 {
				speed = fmt.Sprintf("%.1f× faster", float64(ru.n)*float64(delay)/float64(d))
			}
			rows = append(rows, []string{fmt.Sprint(ru.n), label, durRange(ds[j]), fmt.Sprintf("%.2f", ideal), numRange(conns[j], "%.0f"), speed, added, goal, v})
		}
	}
	if n := h1.badSig.Load() + h2.badSig.Load(); n > 0 {
		return fmt.Errorf("%d requests with a signature that does not verify", n)
	}
	printTable(o.stdout(), fmt.Sprintf("2. Fan-out: one batch of webhooks, receiver answers after %s (median (min–max) of %d, after one batch that opens the connections; "+
		"the store-on rows (DynamoDB table %s, LocalStack's moto) timed in turns with the rows above them); load average %s at start, %s at end", delay, o.reps, storeName, load0, loadAvg()),
		[]string{"batch", "concurrency", "wall", fmt.Sprintf("wall / %d ms", delay.Milliseconds()), "new connections", "vs one at a time", "store adds (turn by turn)", "goal", "verdict"}, rows)
	if !missed || o.quick {
		return nil
	}
	// Name the limit: where the CPU of ten more batches of 100 goes.
	p, err := deliverer(awsCfg, h1, nil)
	if err != nil {
		return err
	}
	if _, err := timeHandle(ctx, p, webhookEvent("warm", large, 0, h1.URL(), 1)); err != nil {
		return err
	}
	return profileHandle(ctx, o, fmt.Sprintf("fanout%d", large), fmt.Sprintf("CPU of 10 batches of %d to the %d ms receiver, default settings", large, delay.Milliseconds()), p, 10,
		func(i int) events.SQSEvent {
			return webhookEvent(fmt.Sprintf("prof%d-%d", large, i), large, 0, h1.URL(), 1)
		})
}
