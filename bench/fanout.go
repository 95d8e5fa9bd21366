package main

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldhq/herald/internal/app"
)

// fanDelay is how long the fan-out receiver takes to answer.
const fanDelay = 100 * time.Millisecond

// sectionFanout hands batches of 10 and 100 webhooks to herald's processor,
// every one answered after 100 ms by a local TLS receiver, at the default
// concurrency and one record at a time, and prints wall time / 100 ms.
func sectionFanout(ctx context.Context, o opts, r *results) error {
	awsCfg, err := app.AWSConfig(ctx)
	if err != nil {
		return err
	}
	rcv := newReceiver(fanDelay)
	defer rcv.Close()
	type run struct {
		n, conc int
		label   string
	}
	runs := []run{{10, 10, "default (10)"}, {10, 1, "1 (one at a time)"}, {100, 10, "default (10)"}, {100, 100, "100"}, {100, 1, "1 (one at a time)"}}
	if o.quick {
		runs = runs[:4]
	}
	var rows [][]string
	for _, ru := range runs {
		p, err := deliverer(awsCfg, rcv, map[string]string{"HERALD_CONCURRENCY": fmt.Sprint(ru.conc)})
		if err != nil {
			return err
		}
		// One batch first to open the connections, as a warm Lambda has.
		if _, err := timeHandle(ctx, p, webhookEvent("warm", min(ru.n, ru.conc), 0, rcv.URL(), 1)); err != nil {
			return err
		}
		reps := o.reps
		if ru.conc == 1 && ru.n == 100 {
			reps = 1
		}
		var ds []time.Duration
		for i := range reps {
			d, err := timeHandle(ctx, p, webhookEvent(fmt.Sprintf("fan%d-%d-%d", ru.n, ru.conc, i), ru.n, 0, rcv.URL(), 1))
			if err != nil {
				return err
			}
			ds = append(ds, d)
		}
		d := median(ds)
		ideal := float64(d) / float64(fanDelay)
		goal, v := "–", "–"
		switch {
		case ru.n == 10 && ru.conc == 10:
			goal, v = "≤ 1.2", verdict(ideal, 1.2, false)
			r.fan10 = d
		case ru.n == 10 && ru.conc == 1:
			r.fan10Seq = d
		}
		speed := "–"
		if ru.conc > 1 {
			speed = fmt.Sprintf("%.1f× faster", float64(ru.n)*float64(fanDelay)/float64(d))
		}
		rows = append(rows, []string{fmt.Sprint(ru.n), ru.label, ms(d), fmt.Sprintf("%.2f", ideal), speed, goal, v})
	}
	table(fmt.Sprintf("2. Fan-out: one batch of webhooks, receiver answers after %s (median of %d)", fanDelay, o.reps),
		[]string{"batch", "concurrency", "wall", "wall / 100 ms", "vs one at a time", "goal", "verdict"}, rows)
	return nil
}
