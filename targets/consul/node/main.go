// Command node is one Consul server: Consul's own agent command
// (github.com/hashicorp/consul/command/agent), built from the module proxy
// at the profile's release, with nothing of Consul changed. Consul's main
// package registers every CLI command; a member of gofault's cluster only
// runs the agent, so this main runs that one command on its arguments:
//
//	node -server -bootstrap-expect=3 -node=n1 -data-dir=DIR ...
//
// The update check, which would call HashiCorp's servers, is off whatever
// the arguments say (CHECKPOINT_DISABLE, and the profile's
// disable_update_check).
package main

import (
	"os"

	mcli "github.com/mitchellh/cli"

	"github.com/hashicorp/consul/command/agent"
	"github.com/hashicorp/consul/command/cli"
)

func main() {
	os.Setenv("CHECKPOINT_DISABLE", "1")
	ui := &cli.BasicUI{BasicUi: mcli.BasicUi{Writer: os.Stdout, ErrorWriter: os.Stderr}}
	cmd := agent.New(ui)
	if cmd == nil {
		os.Exit(1)
	}
	os.Exit(cmd.Run(os.Args[1:]))
}
