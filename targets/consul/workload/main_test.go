package main

import (
	"testing"
	"time"

	"github.com/gofault/gofault/workload"
)

func TestLoadConfig(t *testing.T) {
	c, err := loadConfig(func(string) string { return "" })
	if err != nil || c != (workload.KVConfig{Duration: 4 * time.Second, Recovery: 8 * time.Second, Keys: 5, Rate: 40, Port: "http"}) {
		t.Errorf("defaults: %+v, %v", c, err)
	}
	env := map[string]string{"CONSUL_WORKLOAD_KEYS": "0"}
	if _, err := loadConfig(func(k string) string { return env[k] }); err == nil {
		t.Error("0 keys accepted")
	}
}

// TestKVDigest: the digest does not depend on the order of the pairs and
// changes with a value or an index.
func TestKVDigest(t *testing.T) {
	a := []kvPair{{Key: "gofault/k0", Value: []byte("n1#1"), CreateIndex: 10, ModifyIndex: 12}, {Key: "gofault/k1", Value: []byte("n2#4"), CreateIndex: 11, ModifyIndex: 11}}
	b := []kvPair{a[1], a[0]}
	if kvDigest(a) != kvDigest(b) {
		t.Error("digest depends on the order")
	}
	c := []kvPair{a[0], {Key: "gofault/k1", Value: []byte("n2#4"), CreateIndex: 11, ModifyIndex: 13}}
	d := []kvPair{a[0], {Key: "gofault/k1", Value: []byte("n2#5"), CreateIndex: 11, ModifyIndex: 11}}
	if kvDigest(a) == kvDigest(c) || kvDigest(a) == kvDigest(d) {
		t.Error("digest misses a changed index or value")
	}
	if kvDigest(nil) == kvDigest(a) {
		t.Error("empty store has the digest of a full one")
	}
}

// TestValue decodes Consul's answer to GET /v1/kv/KEY (values are base64).
func TestValue(t *testing.T) {
	v, err := value(`[{"LockIndex":0,"Key":"gofault/k0","Flags":0,"Value":"bjEjMQ==","CreateIndex":26,"ModifyIndex":26}]`)
	if err != nil || v != "n1#1" {
		t.Errorf("value = %q, %v", v, err)
	}
	if _, err := value(`[]`); err == nil {
		t.Error("no pair accepted")
	}
}
