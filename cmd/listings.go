package cmd

import "github.com/spf13/cobra"

// listingCommands are the listings commands (import).
func listingCommands(g *globals) []*cobra.Command { return []*cobra.Command{newImport(g)} }
