//go:build unix

package player

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// inProcessGroup starts cmd in a process group of its own: what the bot
// starts (sh -c, a wrapper script) is killed with it, and a Ctrl-C at the
// terminal reaches leaguectl, which stops the bot, not the bot directly.
func inProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills the process group p leads.
func killGroup(p *os.Process) error {
	if p == nil {
		return nil
	}
	err := syscall.Kill(-p.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}
