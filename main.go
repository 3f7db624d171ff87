// Command agentd is a self-hosted control plane for AI voice and chat agents.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentd/agentd/cmd"
	"github.com/agentd/agentd/cmd/analysiscmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	root := cmd.NewRoot()
	root.AddCommand(analysiscmd.Commands()...) // agentd test, agentd analyze (kept out of cmd, at its size limit)
	err := cmd.Execute(ctx, root)
	stop()
	if err != nil {
		os.Exit(1)
	}
}
