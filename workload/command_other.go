//go:build !unix

package workload

import "os/exec"

func setProcessGroup(*exec.Cmd) {}

func killGroup(*exec.Cmd) {}
