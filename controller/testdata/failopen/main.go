// Command failopen is a stand-in target for the controller's fail-open test:
// it calls the hook at site 0 a fixed number of times, printing the time of
// every injected fault, then "DONE n" when its work is finished.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/gofault/gofault/agent"
)

func main() {
	n, _ := strconv.Atoi(os.Getenv("FAILOPEN_ITERATIONS"))
	done := 0
	for i := 0; i < n; i++ {
		if agent.Fault(0) != 0 {
			fmt.Printf("I %d\n", time.Now().UnixNano())
		}
		time.Sleep(2 * time.Millisecond)
		done++
	}
	fmt.Printf("DONE %d\n", done)
}
