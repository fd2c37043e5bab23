package record

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestLogBaselineJSON(t *testing.T) {
	b := LogBaseline{Trials: 2, Templates: map[string]int{"warn x.go a <n>": 2}}
	data, err := json.Marshal(&b)
	if err != nil {
		t.Fatal(err)
	}
	var back LogBaseline
	if err := json.Unmarshal(data, &back); err != nil || !reflect.DeepEqual(back, b) {
		t.Fatalf("round trip %s: %+v %v", data, back, err)
	}
	c := back.Clone()
	c.Templates["other"] = 1
	if back.Known("other") || !c.Known("warn x.go a <n>") {
		t.Fatal("Clone shares its map")
	}
	if !back.Known("warn x.go a <n>") || back.Known("warn x.go b") || (*LogBaseline)(nil).Known("x") {
		t.Fatal("Known")
	}
}
