package agent

import "embed"

// Source holds the agent module's own source (go.mod, the agent package,
// agent/wire and agent/durable), so that a gofault binary can write the
// module into a build's work dir and instrument any project without a
// checkout of gofault.
// Test files are included by the pattern; writers skip them.
//
//go:embed go.mod *.go *.s wire/*.go durable/*.go
var Source embed.FS
