//go:build unix

package doctor

import "golang.org/x/sys/unix"

// freeBytes is the space unprivileged writers may still use in dir.
func freeBytes(dir string) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}
