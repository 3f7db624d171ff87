//go:build unix

package api

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) this process has used: a
// benchmark reports it beside wall time, which other load on the machine
// stretches.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
