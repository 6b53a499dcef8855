//go:build !wasip1

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// osRunner runs commands with os/exec, for make built for the host
// (the native tests run it against GNU make).
type osRunner struct {
	next  int
	procs map[int]*exec.Cmd
	done  chan exitInfo
}

type exitInfo struct{ pid, code, sig int }

func newRunner() runner { return &osRunner{procs: map[int]*exec.Cmd{}, done: make(chan exitInfo, 64)} }

func (r *osRunner) start(argv []string, env []string, dir string) (int, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) {
			if errors.Is(ee.Err, exec.ErrNotFound) {
				return 0, syscall.ENOENT
			}
			return 0, ee.Err
		}
		return 0, err
	}
	r.next++
	id := r.next
	r.procs[id] = cmd
	go func() {
		err := cmd.Wait()
		r.done <- exitInfo{id, code(err), sig(cmd)}
	}()
	return id, nil
}

func code(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ee.ExitCode() >= 0 {
			return ee.ExitCode()
		}
		return 0
	}
	if err != nil {
		return 127
	}
	return 0
}

func sig(cmd *exec.Cmd) int {
	if cmd.ProcessState == nil {
		return 0
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return int(ws.Signal())
	}
	return 0
}

func (r *osRunner) wait() (int, int, int, error) {
	if len(r.procs) == 0 {
		return 0, 0, 0, syscall.ECHILD
	}
	e := <-r.done
	delete(r.procs, e.pid)
	return e.pid, e.code, e.sig, nil
}

func (r *osRunner) capture(argv []string, env []string, dir string) ([]byte, int, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, dir
	var out bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, &out, os.Stderr
	if err := cmd.Start(); err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) {
			if errors.Is(ee.Err, exec.ErrNotFound) {
				return nil, 127, syscall.ENOENT
			}
			return nil, 127, ee.Err
		}
		return nil, 127, err
	}
	status := code(cmd.Wait())
	return out.Bytes(), status, nil
}
