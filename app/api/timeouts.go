package api

import (
	"cmp"
	"time"
)

// bodyDeadline is when reading a request with a large body limit must be
// done: the read timeout plus the largest body at 256 KiB/s (32 MiB: 128 s
// more), so a legitimate upload fits and a dribbling client is cut off.
func bodyDeadline(cfg Config, limit int64) time.Time {
	return time.Now().Add(readTimeout(cfg) + time.Duration(limit/(256<<10))*time.Second)
}

// readTimeout is the server's bound on reading one request; default 30 s.
func readTimeout(cfg Config) time.Duration { return cmp.Or(cfg.ReadTimeout, 30*time.Second) }
