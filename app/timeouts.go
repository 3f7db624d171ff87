package app

import "time"

// minBodyRate is the slowest upload a large body may take: a route taking
// up to 32 MiB gets the read timeout plus 128 s, a legitimate upload fits,
// a client dribbling bytes is still cut off.
const minBodyRate = 256 << 10 // bytes per second

// readTimeout is the server's bound on reading one request.
func readTimeout(cfg Config) time.Duration {
	if cfg.ReadTimeout > 0 {
		return cfg.ReadTimeout
	}
	return 30 * time.Second
}

// bodyDeadline is when reading a request with a large body limit must be
// done: the read timeout plus the time the largest body takes at minBodyRate.
func bodyDeadline(cfg Config, limit int64) time.Time {
	return time.Now().Add(readTimeout(cfg) + time.Duration(limit/minBodyRate)*time.Second)
}
