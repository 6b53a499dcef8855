//go:build !wasip1

package main

import (
	"errors"
	"os"
	"os/exec"
)

// runEditor runs the editor on the standard descriptors and waits.
func runEditor(argv []string) (int, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	return 0, err
}
