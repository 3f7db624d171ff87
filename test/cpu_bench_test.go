package test

import (
	"os"
	"strconv"
	"strings"
)

// machineCPU returns a function that tells how busy the whole machine's
// CPUs were, in percent, since machineCPU was called (from /proc/stat;
// -1 where there is none). The multi-process benchmarks report it beside
// their figures: three processes can only outrun one while the CPUs have
// room, and on a small machine they run out of it first.
func machineCPU() func() float64 {
	busy0, total0, ok := readCPU()
	return func() float64 {
		busy1, total1, ok1 := readCPU()
		if !ok || !ok1 || total1 <= total0 {
			return -1
		}
		return 100 * float64(busy1-busy0) / float64(total1-total0)
	}
}

func readCPU() (busy, total int64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0, 0, false
	}
	for i, s := range f[1:] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		if i >= 8 { // guest time is counted in user already
			break
		}
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total, true
}
