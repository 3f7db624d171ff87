package livekitdial

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"
)

// LiveKitProbe is what one API call told about a LiveKit server.
type LiveKitProbe struct {
	Rooms int           // rooms open now
	RTT   time.Duration // of the ListRooms call
	// ServerTime is the server's clock from the answer's Date header (one
	// second resolution), zero when absent: tokens are signed with our
	// clock, so a skew of more than the server's leeway breaks every call.
	ServerTime time.Time
}

// ProbeLiveKit checks the credentials of cfg with one RoomService/ListRooms
// call (a wrong key or secret answers unauthenticated; see
// LiveKitUnauthenticated), then that the outbound trunk exists.
func ProbeLiveKit(ctx context.Context, cfg LiveKitConfig) (LiveKitProbe, error) {
	l, err := NewLiveKit(cfg, nil)
	if err != nil {
		return LiveKitProbe{}, err
	}
	dr := &dateRecorder{base: http.DefaultTransport}
	l.client.http = &http.Client{Transport: dr}
	start := time.Now()
	var rooms lkListRoomsResponse
	if err := l.client.call(ctx, "RoomService/ListRooms", grantRoomList(), lkListRoomsRequest{}, &rooms, l.cfg.HTTPTimeout); err != nil {
		return LiveKitProbe{ServerTime: dr.get()}, err
	}
	p := LiveKitProbe{Rooms: len(rooms.Rooms), RTT: time.Since(start), ServerTime: dr.get()}
	return p, l.CheckTrunk(ctx)
}

// LiveKitUnauthenticated reports whether err is the server refusing our
// token: a wrong API key or secret (or a clock far off).
func LiveKitUnauthenticated(err error) bool {
	var te *lkTwirpError
	return errors.As(err, &te) && (te.Code == "unauthenticated" || te.HTTPStatus == http.StatusUnauthorized)
}

// dateRecorder keeps the Date header of the last answer.
type dateRecorder struct {
	base http.RoundTripper
	mu   sync.Mutex
	date time.Time
}

func (d *dateRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := d.base.RoundTrip(r)
	if err == nil {
		if t, perr := http.ParseTime(resp.Header.Get("Date")); perr == nil {
			d.mu.Lock()
			d.date = t
			d.mu.Unlock()
		}
	}
	return resp, err
}

func (d *dateRecorder) get() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.date
}
