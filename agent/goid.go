package agent

import "runtime"

// stackGoid parses the calling goroutine's ID from the header of
// runtime.Stack ("goroutine 42 [running]:").
func stackGoid() uint64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	var id uint64
	for _, c := range buf[len("goroutine "):n] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}
