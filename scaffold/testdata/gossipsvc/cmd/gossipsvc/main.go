// Command gossipsvc is the node program, shaped like Alertmanager's: no
// consensus, its state replicated by gossip over memberlist.
package main

import (
	"github.com/acme/gossipsvc/api"
	"github.com/acme/gossipsvc/cluster"
	"github.com/acme/gossipsvc/config"
	"github.com/acme/gossipsvc/notify/email"
	"github.com/acme/gossipsvc/notify/slack"
	"github.com/acme/gossipsvc/ui"
)

func main() {
	cluster.Join()
	api.Serve()
	config.Load()
	email.Send()
	slack.Send()
	ui.Register()
}
