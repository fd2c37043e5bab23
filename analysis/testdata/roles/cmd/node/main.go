// Command node runs the role shapes once and prints the roles they end in.
package main

import (
	"fmt"

	"example.com/roles/boollike"
	"example.com/roles/dragonlike"
	"example.com/roles/enumlike"
	"example.com/roles/etcdlike"
	"example.com/roles/hashilike"
	"example.com/roles/natslike"
	"example.com/roles/stringlike"
)

func main() {
	fmt.Println(etcdlike.Demo(), hashilike.Demo(), natslike.Demo(), stringlike.Demo(), enumlike.Demo(), boollike.Demo(), dragonlike.Demo())
}
