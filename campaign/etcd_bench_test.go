package campaign

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gofault/gofault/cluster"
	"github.com/gofault/gofault/config"
)

// BenchmarkEtcdStartStop measures starting the etcd profile's 3-node
// cluster until every member is ready and stopping it, per shutdown order.
// It needs an etcd node binary (e.g. from "gofault build --uninstrumented"):
//
//	GOFAULT_ETCD_BIN=/path/to/etcd go test -run '^$' -bench EtcdStartStop -benchtime 5x ./campaign
func BenchmarkEtcdStartStop(b *testing.B) {
	bin := os.Getenv("GOFAULT_ETCD_BIN")
	if bin == "" {
		b.Skip("set GOFAULT_ETCD_BIN to an etcd node binary")
	}
	cfg, err := config.Load("../targets/etcd/gofault.yaml")
	if err != nil {
		b.Fatal(err)
	}
	cfg.Defaults()
	for _, order := range []string{config.ShutdownParallel, config.ShutdownSequential} {
		b.Run(order, func(b *testing.B) {
			cfg.Cluster.Shutdown.Order = order
			nodes, err := clusterNodes(cfg.Cluster)
			if err != nil {
				b.Fatal(err)
			}
			var start, stop time.Duration
			kills, i := 0, 0
			for b.Loop() {
				i++
				t0 := time.Now()
				c, err := cluster.Start(context.Background(), cluster.Spec{
					Dir: filepath.Join(b.TempDir(), "trial"), Trial: fmt.Sprint(order, i), Bin: bin, Nodes: nodes,
				})
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				for _, r := range c.Stop() {
					if r.Signal == "SIGKILL" {
						kills++
					}
				}
				start, stop = start+t1.Sub(t0), stop+time.Since(t1)
			}
			b.ReportMetric(start.Seconds()/float64(i), "start-s/op")
			b.ReportMetric(stop.Seconds()/float64(i), "stop-s/op")
			b.ReportMetric(float64(kills)/float64(i), "sigkills/op")
		})
	}
}
