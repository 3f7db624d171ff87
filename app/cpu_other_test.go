//go:build !unix

package app

import "time"

// processCPU is unknown here (0).
func processCPU() time.Duration { return 0 }
