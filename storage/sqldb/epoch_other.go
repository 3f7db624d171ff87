//go:build !unix

package sqldb

// shmWatch is unavailable here: every AuthEpoch call queries the database.
type shmWatch struct{}

func openShmWatch(string) *shmWatch       { return nil }
func (w *shmWatch) header() (h [48]byte)  { return h }
func (w *shmWatch) close()                {}
func (w *shmWatch) pendingFrames() uint32 { return 0 }
