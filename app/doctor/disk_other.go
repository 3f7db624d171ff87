//go:build !unix

package doctor

import "errors"

// freeBytes is not measured on this system.
func freeBytes(string) (uint64, error) {
	return 0, errors.New("free disk space is not measured on this system")
}
