// Command node runs the role shapes once and prints the roles they end in.
package main

import (
	"fmt"

	"example.com/roles/etcdlike"
	"example.com/roles/hashilike"
	"example.com/roles/natslike"
)

func main() {
	fmt.Println(etcdlike.Demo(), hashilike.Demo(), natslike.Demo())
}
