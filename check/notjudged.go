package check

import "github.com/gofault/gofault/record"

// NotJudgedReason is the reason of a trial's first record.EvNotJudged
// event (the workload said it could not judge the trial), and whether
// there was one.
func NotJudgedReason(client []record.ClientEvent) (string, bool) {
	for _, e := range client {
		if e.Kind == record.EvNotJudged {
			return e.Msg, true
		}
	}
	return "", false
}
