package dial

import (
	"container/heap"
	"fmt"
	"time"
)

// TimezoneAwareConfig is a batch's timezoneAwareConfig (API.md). When it is
// absent or not Enabled, calls keep their explicit times.
type TimezoneAwareConfig struct {
	Enabled              bool   `json:"enabled"`
	LocalScheduleTime    string `json:"localScheduleTime,omitempty"` // HH:mm, default for every call
	RespectBusinessHours bool   `json:"respectBusinessHours,omitempty"`
	BusinessHoursStart   string `json:"businessHoursStart,omitempty"` // HH:mm, default 09:00
	BusinessHoursEnd     string `json:"businessHoursEnd,omitempty"`   // HH:mm, default 17:00, exclusive
	ExcludeWeekends      bool   `json:"excludeWeekends,omitempty"`
	// AllowedDays: 0 (Sunday) to 6 (Saturday); nil = every day, [] is invalid.
	AllowedDays []int `json:"allowedDays"`
	// MaxCallsPerDay caps the batch's calls per local calendar day; 0 = no cap.
	MaxCallsPerDay int         `json:"maxCallsPerDay,omitempty"`
	Staggering     *Staggering `json:"staggering,omitempty"`
}

// Staggering spaces consecutive calls of a batch apart.
type Staggering struct {
	Enabled         bool    `json:"enabled"`
	IntervalMinutes float64 `json:"intervalMinutes"`
}

// MaxStaggerMinutes bounds staggering.intervalMinutes (one week).
const MaxStaggerMinutes = 7 * 24 * 60

// Validate checks the batch-level fields; errors are *FieldError with paths
// such as "timezoneAwareConfig.localScheduleTime" (API: 400 for the batch).
// It checks the fields even when Enabled is false: a malformed value is bad
// input either way.
func (c *TimezoneAwareConfig) Validate() error {
	if err := c.window("", "", "", "").Validate(); err != nil {
		fe := err.(*FieldError)
		return &FieldError{"timezoneAwareConfig." + fe.Field, fe.Msg}
	}
	if c.MaxCallsPerDay < 0 {
		return &FieldError{"timezoneAwareConfig.maxCallsPerDay", "must be 0 (no cap) or more"}
	}
	if s := c.Staggering; s != nil && s.Enabled && (s.IntervalMinutes <= 0 || s.IntervalMinutes > MaxStaggerMinutes) {
		return &FieldError{"timezoneAwareConfig.staggering.intervalMinutes", fmt.Sprintf("must be more than 0 and at most %d when staggering is enabled", MaxStaggerMinutes)}
	}
	return nil
}

func (c *TimezoneAwareConfig) window(tz, lst, before, after string) Window {
	if lst == "" {
		lst = c.LocalScheduleTime
	}
	return Window{
		TZ: tz, LocalScheduleTime: lst,
		RespectBusinessHours: c.RespectBusinessHours,
		BusinessHoursStart:   c.BusinessHoursStart, BusinessHoursEnd: c.BusinessHoursEnd,
		ExcludeWeekends: c.ExcludeWeekends, AllowedDays: c.AllowedDays,
		DoNotCallBefore: before, DoNotCallAfter: after,
	}
}

// BatchConfig is the batch-wide input of PlanBatch.
type BatchConfig struct {
	DefaultScheduledAt time.Time            // zero: none
	TZ                 *TimezoneAwareConfig // nil or disabled: explicit times only
}

// PlanItem is one call of a batch, as far as its timing goes.
type PlanItem struct {
	ScheduledAt       time.Time // item scheduledAt; zero: none
	Timezone          string    // item timezone (IANA)
	MetadataTimezone  string    // callMetadata.timezone, used when Timezone is empty
	LocalScheduleTime string    // item localScheduleTime (HH:mm), overrides the batch's
	DoNotCallBefore   string    // callMetadata.doNotCallBefore
	DoNotCallAfter    string    // callMetadata.doNotCallAfter
	// Hours, when set, is the organization's calling hours in the
	// recipient's zone: the call's time must be inside them too, on top
	// of timezoneAwareConfig (with or without it).
	Hours *Window
}

// Planned is the outcome for one item: its time, or why it has none.
type Planned struct {
	At     time.Time // UTC; zero when Err is set
	Window Window    // the call's window; store it so retries obey it
	Err    error     // per-item problem: *FieldError (field path within the item) or ErrNoWindow
}

// PlanBatch computes when each call of a batch is placed, in UTC, never
// before now. The returned error is for the batch as a whole (invalid
// timezoneAwareConfig); per-item problems are in Planned.Err by index.
//
// Without an enabled timezoneAwareConfig a call's time is its scheduledAt,
// else the batch's defaultScheduledAt, else now (a past time becomes now).
//
// With it, for each call: the zone is the item's timezone, else
// callMetadata.timezone, else UTC. The start is the call's explicit time
// (item, else batch default) when later than now, else now. With a
// localScheduleTime (item's, else the batch's) the call goes at the first
// occurrence of that local time at or after the start on an allowed day;
// then (or without one, from the start) it is pushed into its window
// (business hours, weekends, allowedDays, callMetadata doNotCallBefore/After).
//
// Then the calls are placed in order of that time, ties by input index,
// earliest first. Staggering: a call goes no earlier than the previously
// placed call plus intervalMinutes, pushed back into its own window if that
// leaves it; placed times therefore rise by at least the interval.
// maxCallsPerDay: a call whose local calendar day (in its own zone; days are
// counted by date across the batch's zones) already holds the cap moves to
// the next allowed day with room, at the same local time (its
// localScheduleTime when it has one, so a push by staggering or a DST gap is
// not carried over), then into its window. A call moved by either rule
// rejoins the queue at its new time, so a call that still fits today goes
// before one pushed to tomorrow.
func PlanBatch(now time.Time, cfg BatchConfig, items []PlanItem) ([]Planned, error) {
	out := make([]Planned, len(items))
	tz := cfg.TZ
	if tz != nil {
		if err := tz.Validate(); err != nil {
			return nil, err
		}
	}
	if tz == nil || !tz.Enabled {
		for i, it := range items {
			at := it.ScheduledAt
			if at.IsZero() {
				at = cfg.DefaultScheduledAt
			}
			if at.IsZero() || at.Before(now) {
				at = now
			}
			out[i].At = at.UTC()
			if it.Hours != nil {
				out[i].At, out[i].Err = NextAllowed(at, Window{}, it.Hours)
			}
		}
		return out, nil
	}

	p := planner{out: out, items: make([]*rules, len(items))}
	if s := tz.Staggering; s != nil && s.Enabled {
		p.interval = time.Duration(s.IntervalMinutes * float64(time.Minute))
	}
	p.maxPerDay = tz.MaxCallsPerDay
	if p.maxPerDay > 0 {
		p.perDay = make(map[int64]int)
		p.pending = make(map[int64]int)
	}
	p.q = make(planQueue, 0, len(items))
	for i, it := range items {
		zone := it.Timezone
		if zone == "" {
			zone = it.MetadataTimezone
		}
		w := tz.window(zone, it.LocalScheduleTime, it.DoNotCallBefore, it.DoNotCallAfter)
		out[i].Window = w
		r, err := w.compile()
		if err != nil {
			out[i].Err = itemFieldError(err.(*FieldError), it)
			continue
		}
		if it.Hours != nil {
			if r.extra, err = it.Hours.compile(); err != nil {
				out[i].Err = err
				continue
			}
		}
		start := it.ScheduledAt
		if start.IsZero() {
			start = cfg.DefaultScheduledAt
		}
		if start.Before(now) {
			start = now
		}
		at, err := r.initial(start)
		if err != nil {
			out[i].Err = err
			continue
		}
		p.items[i] = r
		p.q = append(p.q, planEntry{at: at, idx: i})
	}
	heap.Init(&p.q)
	p.run()
	return out, nil
}

// itemFieldError names the item field a window error came from.
func itemFieldError(fe *FieldError, it PlanItem) error {
	switch fe.Field {
	case "timezone":
		if it.Timezone == "" {
			return &FieldError{"callMetadata.timezone", fe.Msg}
		}
	case "doNotCallBefore", "doNotCallAfter":
		return &FieldError{"callMetadata." + fe.Field, fe.Msg}
	case "localScheduleTime":
	default: // batch-level fields were validated already
		return &FieldError{"timezoneAwareConfig." + fe.Field, fe.Msg}
	}
	return fe
}

type planner struct {
	out       []Planned
	items     []*rules
	q         planQueue
	interval  time.Duration
	maxPerDay int
	perDay    map[int64]int // local civil day -> calls placed
	// pending counts calls moved to a day by the cap but not yet placed, so
	// the next overflowing call looks further instead of piling onto the
	// same day (which would make a tight cap quadratic in heap operations).
	pending map[int64]int
}

func (p *planner) run() {
	var last time.Time
	placed := false
	for p.q.Len() > 0 {
		e := heap.Pop(&p.q).(planEntry)
		if e.reserved {
			p.pending[e.day]--
		}
		r := p.items[e.idx]
		at := e.at
		if placed && p.interval > 0 && at.Before(last.Add(p.interval)) {
			next, err := r.next(last.Add(p.interval))
			if err != nil {
				p.out[e.idx].Err = err
				continue
			}
			if !next.Equal(last.Add(p.interval)) {
				// Left its window: rejoin the queue at its new time.
				heap.Push(&p.q, planEntry{at: next, idx: e.idx})
				continue
			}
			at = next
		}
		if p.maxPerDay > 0 {
			wall := localWall(at, r.loc)
			day := floorDiv(wall, daySec)
			if p.perDay[day] >= p.maxPerDay {
				sod := wall - day*daySec
				if r.sched >= 0 {
					sod = r.sched // the asked-for local time, not where a push left it
				}
				moved, to, err := p.nextFreeDay(r, day, sod)
				if err != nil {
					p.out[e.idx].Err = err
					continue
				}
				p.pending[to]++
				heap.Push(&p.q, planEntry{at: moved, idx: e.idx, reserved: true, day: to})
				continue
			}
			p.perDay[day]++
		}
		p.out[e.idx].At = at
		last, placed = at, true
	}
}

// nextFreeDay finds the next allowed day after day with room under the cap
// and returns the local time sod on it, pushed into the window, and the day.
func (p *planner) nextFreeDay(r *rules, day, sod int64) (time.Time, int64, error) {
	// Every full day is in perDay or pending and some weekday in 7 is
	// allowed, so a free day lies within this horizon; it only guards.
	limit := day + MaxSearchDays + 7*int64(len(p.perDay)+len(p.pending))
	for d := day + 1; d <= limit; d++ {
		if !r.dayOK(d) || p.perDay[d]+p.pending[d] >= p.maxPerDay {
			continue
		}
		at, err := r.next(wallToInstant(r.loc, d*daySec+sod))
		return at, d, err
	}
	return time.Time{}, 0, fmt.Errorf("%w: no day with room under maxCallsPerDay", ErrNoWindow)
}

type planEntry struct {
	at       time.Time
	idx      int
	reserved bool  // counted in pending[day]
	day      int64 // the day moved to by the cap
}

// planQueue is a min-heap by time, then input index.
type planQueue []planEntry

func (q planQueue) Len() int { return len(q) }
func (q planQueue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].idx < q[j].idx
}
func (q planQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *planQueue) Push(x any)   { *q = append(*q, x.(planEntry)) }
func (q *planQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}
