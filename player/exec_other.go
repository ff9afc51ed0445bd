//go:build !unix

package player

import (
	"os"
	"os/exec"
)

// inProcessGroup does nothing where process groups are not Unix's: only
// the bot's own process is killed.
func inProcessGroup(*exec.Cmd) {}

// killGroup kills p.
func killGroup(p *os.Process) error {
	if p == nil {
		return nil
	}
	return p.Kill()
}
