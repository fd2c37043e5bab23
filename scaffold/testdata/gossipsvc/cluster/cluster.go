// Package cluster is the only package that imports the gossip library.
package cluster

import "github.com/hashicorp/memberlist"

// Join joins the members.
func Join() { _, _ = memberlist.Create() }
