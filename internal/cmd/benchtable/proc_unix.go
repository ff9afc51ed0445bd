//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// ownGroup puts cmd in a process group of its own and makes its
// cancellation kill the whole group: killing go build alone leaves its
// compilers running, writing into a directory about to be removed.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
