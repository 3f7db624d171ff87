package cmd

import (
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/app"
	"github.com/agentd/agentd/app/doctor"
	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/app/voice/speech"
)

// newDoctor checks the configuration that serve would run with, given by
// the same flags and variables, before going live.
func newDoctor(g *globals) *cobra.Command {
	var flagChecks func(*cobra.Command, []string) error
	c := withServeFlags(g, &cobra.Command{
		Use:   "doctor [serve flags]",
		Short: "Check configuration, database, disk, dialer, embedder and clock; exit 1 on any failure",
		Long: `doctor takes every flag and variable of serve and checks what serve would use:
  config     the same validation serve runs before it touches the database
  database   the file exists and every migration of this binary is applied (read only)
  integrity  PRAGMA integrity_check
  disk       free space beside the database (fails under 100 MiB, warns under 1 GiB or
             twice the database)
  dialer     sip: one OPTIONS to the trunk; livekit: ListRooms with the credentials, then
             the outbound trunk; none and sim: a warning
  embedder   one text embedded with the configured embedder
  model      builtin: nothing to check; openai: one short chat answered by the model
  speech-to-text, text-to-speech
             none: a warning (voice agents stay silent until both are set); openai: half a
             second of silence transcribed, and one word spoken (its first audio read)
  clock      set, not behind the newest time stored in the database, and (livekit) within
             5 s (warn) / 30 s (fail) of the LiveKit server's clock
It changes nothing and may run beside a running server. Exit status 1 when a check fails.`,
	}, func(c *cobra.Command, cfg app.Config) error {
		var cfgErr error
		if flagChecks != nil {
			cfgErr = flagChecks(c, nil)
		}
		cfgErr = errors.Join(cfgErr, cfg.Validate())
		emb, embErr := kb.NewEmbedder(cfg.KB)
		rr, rrErr := kb.NewReranker(cfg.KB)
		model, modelErr := llm.New(cfg.LLM)
		stt, sttErr := speech.NewSTT(cfg.STT)
		tts, ttsErr := speech.NewTTS(cfg.TTS)
		rep := doctor.Run(c.Context(), doctor.Input{
			ConfigErr: cfgErr, DBPath: cfg.DBPath, Inspect: inspectFile, Dialer: cfg.Calls.Dialer,
			SIP: cfg.Calls.Telephony.SIP, LiveKit: cfg.Calls.Telephony.LiveKit,
			Embedder: emb, EmbedderErr: embErr, Reranker: rr, RerankerErr: rrErr, Model: model, ModelErr: modelErr,
			STT: stt, STTErr: sttErr, TTS: tts, TTSErr: ttsErr, MCP: features.ProbeMCP(cfg.DBPath, cfg.Webhooks.AllowPrivate, 5*time.Second),
		})
		if g.json {
			if err := printJSON(c.OutOrStdout(), rep); err != nil {
				return err
			}
		} else {
			tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "CHECK\tSTATUS\tDETAIL")
			for _, r := range rep.Checks {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Check, r.Status, r.Detail)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
		if n := rep.Failed(); n > 0 {
			return fmt.Errorf("doctor: %d of %d checks failed", n, len(rep.Checks))
		}
		return nil
	})
	// serve's flag checks (--dial-cps, --sim-call-seconds...) run as part
	// of the config check instead of stopping the doctor before its table.
	flagChecks, c.PreRunE = c.PreRunE, nil
	return c
}
