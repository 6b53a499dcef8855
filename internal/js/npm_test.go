package js

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/npmtest"
	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/vfs"
)

// npmPackages installs testdata/npm (pinned by its lockfile) into the
// cache once and returns the node_modules directory.
func npmPackages(t *testing.T) string {
	t.Helper()
	return npmInstall(t, "testdata/npm", "npm-compat-")
}

// npmInstall installs the packages of dir (pinned by its lockfile) into
// the cache once and returns the node_modules directory.
func npmInstall(t *testing.T, dir, prefix string) string {
	t.Helper()
	return npmtest.Install(t, dir, prefix)
}

// Popular pure-JS packages load from a read-only node_modules mounted from
// the host, through require and import, and work.
func TestNpmPackages(t *testing.T) {
	mods := npmPackages(t)
	v := newVM(t, nil, vm.Mount{Path: "/workspace/node_modules", HostDir: mods, ReadOnly: true})
	v.writeFile("/workspace/cjs.js", `
const _ = require('lodash'); console.log('lodash', _.chunk([1, 2, 3, 4, 5], 2).length, _.camelCase('foo bar'));
const { z } = require('zod'); console.log('zod', z.object({ a: z.number() }).safeParse({ a: 'x' }).success, z.string().parse('ok'));
const semver = require('semver'); console.log('semver', semver.satisfies('1.2.3', '^1.0.0'), semver.inc('1.2.3', 'minor'));
const uuid = require('uuid'); console.log('uuid', uuid.validate(uuid.v4()), uuid.v5('x', uuid.NIL).length);
const YAML = require('yaml'); console.log('yaml', JSON.stringify(YAML.parse('a: [1, 2]\nb: {c: d}')));
const dayjs = require('dayjs'); console.log('dayjs', dayjs('2020-01-02').add(1, 'day').format('YYYY-MM-DD'));
const ms = require('ms'); console.log('ms', ms('2h'), ms(60000));
const minimist = require('minimist'); console.log('minimist', JSON.stringify(minimist(['-x', '3', '--y=z', 'q'])));
const { Command } = require('commander'); const prog = new Command().option('-n, --num <n>').exitOverride(); prog.parse(['node', 'x', '-n', '5']); console.log('commander', prog.opts().num);
const Ajv = require('ajv'); const ajv = new Ajv(); console.log('ajv', ajv.validate({ type: 'object', required: ['a'] }, { a: 1 }), ajv.validate({ type: 'string' }, 1));
const { addDays, format } = require('date-fns'); console.log('date-fns', format(addDays(new Date(2020, 0, 1), 2), 'yyyy-MM-dd'));
const { produce } = require('immer'); const base = { a: [1] }; const next = produce(base, (d) => { d.a.push(2); }); console.log('immer', base.a.length, next.a.length, Object.isFrozen(next));
const jsyaml = require('js-yaml'); console.log('js-yaml', jsyaml.dump({ k: [1, 'v'] }).trim().split('\n').join('|'));
const pc = require('picocolors'); console.log('picocolors', typeof pc.red('x'));
const { nanoid } = require('nanoid'); console.log('nanoid', nanoid().length);
const { marked } = require('marked'); console.log('marked', marked.parse('# hi').trim());
const chalk = require('chalk').default; console.log('chalk', typeof chalk.blue('x'));
const classNames = require('classnames'); console.log('classnames', classNames('a', { b: true, c: false }, ['d']));
const qs = require('qs'); console.log('qs', JSON.stringify(qs.parse('a[b]=1&a[c][]=2&a[c][]=3')), qs.stringify({ x: { y: 'z w' } }));
const pLimit = require('p-limit').default; const limit = pLimit(1); Promise.all([1, 2, 3].map((x) => limit(async () => x * 2))).then((r) => console.log('p-limit', r.join(',')));
`)
	r := v.run("", "node", "cjs.js")
	want := []string{"lodash 3 fooBar", "zod false ok", "semver true 1.3.0", "uuid true 36", `yaml {"a":[1,2],"b":{"c":"d"}}`,
		"dayjs 2020-01-03", "ms 7200000 1m", `minimist {"_":["q"],"x":3,"y":"z"}`, "commander 5", "ajv true false",
		"date-fns 2020-01-03", "immer 1 2 true", "js-yaml k:|  - 1|  - v", "picocolors string", "nanoid 21",
		"marked <h1>hi</h1>", "chalk string", "classnames a b d", `qs {"a":{"b":"1","c":["2","3"]}} x%5By%5D=z%20w`,
		"p-limit 2,4,6"}
	for _, w := range want {
		if !strings.Contains(r.stdout, w+"\n") {
			t.Errorf("missing %q", w)
		}
	}
	if t.Failed() || r.code != 0 {
		t.Fatalf("code %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, trunc(r.stderr))
	}

	v.writeFile("/workspace/esm.mjs", `
import _ from 'lodash'; import { z } from 'zod'; import semver from 'semver'; import { v4, validate } from 'uuid';
import YAML from 'yaml'; import chalk from 'chalk'; import { nanoid } from 'nanoid'; import pLimit from 'p-limit';
import { marked } from 'marked'; import { format } from 'date-fns'; import { produce } from 'immer'; import ms from 'ms';
import classNames from 'classnames'; import qs from 'qs';
console.log(_.sum([1, 2]), z.number().safeParse(1).success, semver.valid('1.0.0'), validate(v4()), YAML.stringify({ a: 1 }).trim(),
  typeof chalk.red, nanoid(5).length, typeof pLimit, marked.parse('*x*').trim(), format(new Date(2021, 5, 1), 'MM'), produce({ n: 1 }, (d) => { d.n++; }).n, ms(1000), classNames('p', { q: 1 }), qs.stringify({ k: [1] }));
`)
	r = v.run("", "node", "esm.mjs")
	if want := "3 true 1.0.0 true a: 1 function 5 function <p><em>x</em></p> 06 2 1s p q k%5B0%5D=1\n"; r.stdout != want || r.code != 0 {
		t.Fatalf("esm: code %d\nstdout %q\nwant   %q\nstderr:\n%s", r.code, r.stdout, want, trunc(r.stderr))
	}
}

// Network packages run unmodified: an express app in the VM answers the
// host (through the kernel's DialGuest, as vm.Net does), and axios and
// node-fetch in the VM call the express app and a host server allowed by
// a rule.
func TestNpmNetworkPackages(t *testing.T) {
	mods := npmPackages(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/api", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "application/json")
		fmt.Fprintf(w, `{"host":true,"q":%q}`, r.URL.Query().Get("q"))
	})
	hs := &http.Server{Handler: mux}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })

	v := newConfiguredVM(t, engine(t), vm.Config{
		Policy: policy.AllowAll().AllowNet(ln.Addr().String()),
		Mounts: []vm.Mount{{Path: "/workspace/node_modules", HostDir: mods, ReadOnly: true}},
	})
	v.writeFile("/workspace/app.js", `
const express = require('express');
const axios = require('axios');
const app = express();
app.use(express.json());
let pending = 2;
const done = () => { if (--pending === 0) { console.log('ready'); server.closeAllConnections(); server.close(); } };
app.get('/hello/:name', (req, res) => { res.json({ hello: req.params.name, q: req.query.q }); if (req.params.name === 'host') res.on('finish', done); });
app.post('/echo', (req, res) => res.status(201).json({ got: req.body }));
const server = app.listen(3000, async () => {
  const a = await axios.get('http://127.0.0.1:3000/hello/axios?q=1');
  const b = await axios.get('http://' + process.argv[2] + '/api?q=2');
  const { default: fetch } = await import('node-fetch');
  const c = await (await fetch('http://127.0.0.1:3000/echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"x":1}' })).json();
  console.log(JSON.stringify([a.data, b.data, c]));
  done();
});
`)
	k := v.vm.Kernel
	outW, out := collect(k, t)
	errW, errOut := collect(k, t)
	p, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{Argv: []string{"node", "app.js", ln.Addr().String()},
		Env: []string{"PATH=/usr/bin:/bin"}, Cwd: "/workspace", Files: []vfs.File{nil, outW, errW}})
	outW.DecRef()
	errW.DecRef()
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return k.DialGuest(ctx, 3000) },
	}}
	var body []byte
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := client.Get("http://app/hello/host?q=3")
		if err == nil {
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the express app never answered: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if st, err := p.HostWait(ctx); err != nil || st.ShellCode() != 0 {
		_ = p.Signal(kernel.SIGKILL)
		t.Errorf("the app ended with %v, %v", st, err)
	}
	stdout, stderr := out(), errOut()
	if string(body) != `{"hello":"host","q":"3"}` {
		t.Fatalf("express answered the host %q\nstdout %s\nstderr %s", body, stdout, trunc(stderr))
	}
	if want := `[{"hello":"axios","q":"1"},{"host":true,"q":"2"},{"got":{"x":1}}]` + "\nready\n"; stdout != want {
		t.Fatalf("stdout %q\nwant   %q\nstderr %s", stdout, want, trunc(stderr))
	}
}
