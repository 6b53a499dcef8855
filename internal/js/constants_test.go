package js

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"reflect"
	"testing"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
)

// constantsProbe prints the tables Node keeps by number: os.constants'
// signals, errno and priority, libuv's error map, and the name and
// message util gives every errno from -200 to -1 and libuv's own codes.
const constantsProbe = `
const os = require('os'), util = require('util');
// Node 22's getSystemErrorMessage, by its definition where an older host
// node has none.
const message = util.getSystemErrorMessage ||
  ((n) => (util.getSystemErrorMap().get(n) || [, 'Unknown system error ' + n])[1]);
const names = {};
for (let n = -200; n < 0; n++) names[n] = [util.getSystemErrorName(n), message(n)];
for (const n of util.getSystemErrorMap().keys()) names[n] = [util.getSystemErrorName(n), message(n)];
const map = [...util.getSystemErrorMap()].sort((a, b) => a[0] - b[0]);
const bad = [], badMessage = [];
for (const v of [0, 1, -1.5, 'x', -(2 ** 60), NaN]) {
  try { util.getSystemErrorName(v); bad.push('none'); } catch (e) { bad.push(e.code + ' ' + e.message); }
  if (util.getSystemErrorMessage) {
    try { util.getSystemErrorMessage(v); badMessage.push('none'); } catch (e) { badMessage.push(e.code + ' ' + e.message); }
  }
}
console.log(JSON.stringify({ signals: os.constants.signals, errno: os.constants.errno, priority: os.constants.priority, map, names, bad, badMessage }));
`

type nodeConstants struct {
	Signals  map[string]int             `json:"signals"`
	Errno    map[string]int             `json:"errno"`
	Priority map[string]int             `json:"priority"`
	Map      [][]json.RawMessage        `json:"map"`
	Names    map[string]json.RawMessage `json:"names"`
	Bad      []string                   `json:"bad"`
	// BadMessage is empty under a host node older than 22.
	BadMessage []string `json:"badMessage"`
}

// The errno and signal numbers live in three places: the kernel's tables
// (kernel/errno, kernel/signal.go), the bootstrap's os.constants
// (internal/constants.js) and its libuv error table (internal/errors.js).
// Host node is the oracle for the JavaScript tables, as mvdan/sh confirms
// its tables against bash, and every name the kernel gives a number must
// be os.constants' number for it.
func TestConstantsMatchKernelAndHostNode(t *testing.T) {
	hostNode, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("this test needs node on the host as its oracle")
	}
	var hostOut, hostErr bytes.Buffer
	cmd := exec.Command(hostNode, "-e", constantsProbe)
	cmd.Stdout, cmd.Stderr = &hostOut, &hostErr
	if err := cmd.Run(); err != nil {
		t.Fatalf("host node: %v\n%s", err, hostErr.String())
	}
	var host, vm nodeConstants
	if err := json.Unmarshal(hostOut.Bytes(), &host); err != nil {
		t.Fatalf("host output: %v", err)
	}
	v := newVM(t, nil)
	r := v.run("", "node", "-e", constantsProbe)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, trunc(r.stderr))
	}
	if err := json.Unmarshal([]byte(r.stdout), &vm); err != nil {
		t.Fatalf("VM output %q: %v", trunc(r.stdout), err)
	}
	check := func(what string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(want)
			t.Errorf("%s differs from host node's\nsecexec: %s\nnode:    %s", what, gj, wj)
		}
	}
	check("os.constants.signals", vm.Signals, host.Signals)
	check("os.constants.errno", vm.Errno, host.Errno)
	check("os.constants.priority", vm.Priority, host.Priority)
	check("util.getSystemErrorMap()", vm.Map, host.Map)
	for n, want := range host.Names {
		if got := vm.Names[n]; !bytes.Equal(got, want) {
			t.Errorf("util.getSystemErrorName/Message(%s) = %s, node %s", n, got, want)
		}
	}
	check("getSystemErrorName's argument errors", vm.Bad, host.Bad)
	if len(host.BadMessage) > 0 {
		check("getSystemErrorMessage's argument errors", vm.BadMessage, host.BadMessage)
	}

	// The kernel's names, by number, against os.constants (which leaves
	// a few Linux errno values unnamed, EBADFD among them).
	named := 0
	for n := 1; n < 200; n++ {
		name := errno.Errno(n).Name()
		if want, ok := vm.Errno[name]; ok {
			named++
			if want != n {
				t.Errorf("kernel errno %d is %s, os.constants.errno.%s is %d", n, name, name, want)
			}
		}
	}
	if named < 40 {
		t.Errorf("only %d kernel errno names are in os.constants.errno", named)
	}
	for s := kernel.Signal(1); s < kernel.NSig; s++ {
		if want := vm.Signals[s.String()]; want != int(s) {
			t.Errorf("kernel signal %d is %s, os.constants.signals.%s is %d", s, s, s, want)
		}
	}
}
