package main

import "testing"

func TestUpstreamURL(t *testing.T) {
	tests := []struct{ goproxy, want string }{
		{"https://proxy.golang.org,direct", "https://proxy.golang.org/sumdb/sum.golang.org"},
		{"file:///tmp/proxy,https://goproxy.example/,direct", "https://goproxy.example/sumdb/sum.golang.org"},
		{"http://127.0.0.1:3000|https://proxy.golang.org", "http://127.0.0.1:3000/sumdb/sum.golang.org"},
		{"direct", "https://sum.golang.org"},
		{"file:///tmp/proxy,off", "https://sum.golang.org"},
		{"", "https://sum.golang.org"},
	}
	for _, tt := range tests {
		if got := upstreamURL(tt.goproxy); got != tt.want {
			t.Errorf("upstreamURL(%q) = %q, want %q", tt.goproxy, got, tt.want)
		}
	}
}
