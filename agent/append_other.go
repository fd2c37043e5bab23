//go:build !(linux || darwin || freebsd)

package agent

import "os"

// appending cannot tell O_APPEND here: a torn write is cut at boundaries
// counted from the descriptor's offset.
func appending(*os.File) bool { return false }
