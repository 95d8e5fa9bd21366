package main

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/processor"
)

// fanDelay is how long the fan-out receiver takes to answer.
const fanDelay = 100 * time.Millisecond

// sectionFanout hands batches of 10 and 100 webhooks to herald's processor,
// every one answered after 100 ms by a local TLS receiver, at the default
// concurrency, at the old default of 10 and one record at a time, and
// against a receiver offering HTTP/2, and prints wall time / 100 ms and the
// new connections the timed batch opened.
func sectionFanout(ctx context.Context, o opts, r *results) error {
	load0 := loadAvg()
	awsCfg, err := app.AWSConfig(ctx)
	if err != nil {
		return err
	}
	h1 := newReceiver(fanDelay)
	defer h1.Close()
	h2 := startReceiver(fanDelay, true)
	defer h2.Close()
	type run struct {
		n, conc int // conc 0: the default
		h2      bool
		label   string
	}
	def := fmt.Sprintf("default (%d)", processor.DefaultConcurrency)
	runs := []run{{10, 0, false, def}, {10, 1, false, "1 (one at a time)"}, {100, 0, false, def}, {100, 0, true, def + ", HTTP/2 receiver"}, {100, 10, false, "10 (the old default)"}, {100, 1, false, "1 (one at a time)"}}
	if o.quick {
		runs = runs[:5]
	}
	var rows [][]string
	missed := false
	for _, ru := range runs {
		rcv := h1
		if ru.h2 {
			rcv = h2
		}
		env := map[string]string{}
		if ru.conc > 0 {
			env["HERALD_CONCURRENCY"] = fmt.Sprint(ru.conc)
		}
		p, err := deliverer(awsCfg, rcv, env)
		if err != nil {
			return err
		}
		// One batch first to open the connections, as a warm Lambda has.
		if _, err := timeHandle(ctx, p, webhookEvent("warm", ru.n, 0, rcv.URL(), 1)); err != nil {
			return err
		}
		reps := o.reps
		if ru.conc == 1 && ru.n == 100 {
			reps = 1
		}
		var ds []time.Duration
		var conns []float64
		for i := range reps {
			before := rcv.conns.Load()
			d, err := timeHandle(ctx, p, webhookEvent(fmt.Sprintf("fan%d-%d-%v-%d", ru.n, ru.conc, ru.h2, i), ru.n, 0, rcv.URL(), 1))
			if err != nil {
				return err
			}
			ds, conns = append(ds, d), append(conns, float64(rcv.conns.Load()-before))
		}
		d := median(ds)
		ideal := float64(d) / float64(fanDelay)
		goal, v := "–", "–"
		switch {
		case ru.conc == 0 && !ru.h2:
			goal, v = "≤ 1.2", verdict(ideal, 1.2, false)
			missed = missed || (ru.n == 100 && v == "MISSED")
			if ru.n == 10 {
				r.fan10 = d
			}
		case ru.n == 10 && ru.conc == 1:
			r.fan10Seq = d
		}
		speed := "–"
		if ru.conc != 1 {
			speed = fmt.Sprintf("%.1f× faster", float64(ru.n)*float64(fanDelay)/float64(d))
		}
		rows = append(rows, []string{fmt.Sprint(ru.n), ru.label, durRange(ds), fmt.Sprintf("%.2f", ideal), numRange(conns, "%.0f"), speed, goal, v})
	}
	if n := h1.badSig.Load() + h2.badSig.Load(); n > 0 {
		return fmt.Errorf("%d requests with a signature that does not verify", n)
	}
	table(fmt.Sprintf("2. Fan-out: one batch of webhooks, receiver answers after %s (median (min–max) of %d, after one batch that opens the connections); load average %s at start, %s at end", fanDelay, o.reps, load0, loadAvg()),
		[]string{"batch", "concurrency", "wall", "wall / 100 ms", "new connections", "vs one at a time", "goal", "verdict"}, rows)
	if !missed || o.quick {
		return nil
	}
	// Name the limit: where the CPU of ten more batches of 100 goes.
	p, err := deliverer(awsCfg, h1, nil)
	if err != nil {
		return err
	}
	if _, err := timeHandle(ctx, p, webhookEvent("warm", 100, 0, h1.URL(), 1)); err != nil {
		return err
	}
	return profileHandle(ctx, o, "fanout100", "CPU of 10 batches of 100 to the 100 ms receiver, default settings", p, 10,
		func(i int) events.SQSEvent { return webhookEvent(fmt.Sprintf("prof100-%d", i), 100, 0, h1.URL(), 1) })
}
