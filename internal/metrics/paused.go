package metrics

import "time"

// PausedEntry is the [Paused] metric of the deliver function
// ([FunctionDeliver]): 1 on the ERROR line of a pause (paused true; package
// pause), 0 on every batch delivered (package processor). A pause of one
// channel's queue is by function and channel (channel set), a pause of
// everything by function alone; a batch delivered is by function, and by
// function and channel when its queue is a channel's. So the paused alarm
// of a channel (by function and channel) returns to OK with that channel's
// first batch after a resume, and the alarm by function alone with any
// batch: each watches one pause. channel is a notification channel
// ("email", "webhook", "chat") or "" for a queue of every channel.
func PausedEntry(t time.Time, channel string, paused bool) Entry {
	e := Entry{
		Time: t,
		Dimensions: []Dimension{
			{Name: DimFunction, Value: FunctionDeliver},
			{Name: DimChannel, Value: channel},
		},
		Metrics: []Metric{{Name: Paused, Unit: Count, Value: 0}},
	}
	switch {
	case paused && channel != "":
		e.Sets = [][]string{{DimFunction, DimChannel}}
	case paused:
		e.Sets = [][]string{{DimFunction}}
	default:
		e.Sets = [][]string{{DimFunction}, {DimFunction, DimChannel}}
	}
	if paused {
		e.Metrics[0].Value = 1
	}
	return e
}
