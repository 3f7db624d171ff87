package cmd

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/app/recordings"
	"github.com/agentd/agentd/cmd/cliflags"
)

// addRecordingFlags says where voice calls' recordings live and how long.
func addRecordingFlags(c *cobra.Command, cfg *recordings.Config) {
	f := c.Flags()
	f.StringVar(&cfg.Dir, "recording-dir", cliflags.String("AGENTD_RECORDING_DIR", ""), "folder of voice call recordings (WAV, 0600); default: recordings beside the SQLite database, off on PostgreSQL unless set (env AGENTD_RECORDING_DIR)")
	f.DurationVar(&cfg.Retention, "recording-retention", cliflags.Duration("AGENTD_RECORDING_RETENTION", 30*24*time.Hour), "recordings older than this are deleted, e.g. 720h (30 days); 0 keeps them (env AGENTD_RECORDING_RETENTION)")
}
