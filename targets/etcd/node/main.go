// Command node is one etcd member for gofault campaigns: it runs etcd's own
// main (etcdmain), so the etcd server packages are what gofault analyses,
// instruments and runs.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
