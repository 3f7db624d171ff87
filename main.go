// Command agentd is a self-hosted control plane for AI voice and chat agents.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentd/agentd/cmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cmd.Execute(ctx, cmd.NewRoot())
	stop()
	if err != nil {
		os.Exit(1)
	}
}
