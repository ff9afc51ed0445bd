//go:build !unix

package main

import "os/exec"

// ownGroup leaves cmd as it is where there are no process groups: its
// cancellation kills it alone.
func ownGroup(*exec.Cmd) {}
