package repro

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// BlockTermVote makes every write of the term and vote of Raft group group
// fail on the server that stores JetStream under storeDir
// (Cluster.StoreDir): nats-server keeps them in
// <storeDir>/$SYS/_js_/<group>/tav.idx, written as tav.idx.tmp and
// renamed, and a directory there cannot be renamed over (docs/found.md
// N5). An ordinary stand-in for any failed write of that file — the EIO
// gofault injected, a failing disk. The server must be stopped; it reads
// the file only at start, and ignores a failed read there.
func BlockTermVote(storeDir, group string) error {
	path := filepath.Join(storeDir, "$SYS", "_js_", group, "tav.idx")
	if err := os.RemoveAll(path); err != nil {
		return fmt.Errorf("block term and vote of %s: %w", group, err)
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return fmt.Errorf("block term and vote of %s: %w", group, err)
	}
	return nil
}

// StepDown asks the leader of a stream (consumer "") or of a consumer to
// hand its leadership to the server named preferred, through the
// JetStream API ($JS.API.STREAM.LEADER.STEPDOWN, or CONSUMER), and says
// the API's error if it answered one.
func StepDown(nc *nats.Conn, stream, consumer, preferred string) error {
	subj := "$JS.API.STREAM.LEADER.STEPDOWN." + stream
	what := "stream " + stream
	if consumer != "" {
		subj = fmt.Sprintf("$JS.API.CONSUMER.LEADER.STEPDOWN.%s.%s", stream, consumer)
		what = "consumer " + consumer
	}
	req, err := json.Marshal(map[string]any{"placement": map[string]string{"preferred": preferred}})
	if err != nil {
		return fmt.Errorf("step down %s: %w", what, err)
	}
	msg, err := nc.Request(subj, req, 5*time.Second)
	if err != nil {
		return fmt.Errorf("step down %s to %s: %w", what, preferred, err)
	}
	var resp struct {
		Error *server.ApiError `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return fmt.Errorf("step down %s to %s: %w", what, preferred, err)
	}
	if resp.Error != nil {
		return fmt.Errorf("step down %s to %s: %s", what, preferred, resp.Error.Description)
	}
	return nil
}
