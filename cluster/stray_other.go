//go:build !linux

package cluster

// killStray finds nothing where there is no /proc.
func killStray(string) []int { return nil }

// BecomeSubreaper is a no-op where the kernel has no child subreapers.
func BecomeSubreaper() error { return nil }
