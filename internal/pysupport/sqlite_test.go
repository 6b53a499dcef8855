package pysupport_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/internal/vmtest"
	"github.com/secexec/secexec/kernel"
)

// These tests run the VM's sqlite3 (sqlite3shell.py on python3's SQLite)
// and the host's Debian sqlite3 3.40 (the reference; .ci/run installs
// it) on identical copies of the same files, and compare standard
// output, standard error, the exit status, and the files left behind
// (databases compared by the host sqlite3's .dump of them).

// sqlCase is one sqlite3 command line, run by sh in the case's directory.
type sqlCase struct {
	// args follow "sqlite3 " in a shell command line.
	args  string
	stdin string
	// dbs are databases to make first, by name: the SQL that fills them
	// (run by the host sqlite3, then copied to both sides).
	dbs map[string]string
	// files are other files to make first.
	files map[string]string
	// banner: the output starts with the interactive banner, whose
	// version line differs (the VM's SQLite is 3.42.0, see
	// TestSqliteVersion) and is left out of the comparison.
	banner bool
}

const people = `create table people(id integer primary key, name text not null, age int, score real, photo blob);
insert into people values(1,'Ann',31,88.5,x'00ff10'),(2,'Bob',NULL,0.1,NULL),(3,'Çé "quoted"',45,-2.5e-7,x''),(4,'multi
line',7,1e20,NULL);
create index people_age on people(age);
create view adults as select name from people where age >= 18;
create table "odd name"(k text primary key, v) without rowid;
insert into "odd name" values('a''b', 1.0), ('tab	here', 123456789012345678);`

// errDB is the database of the error cases.
const errDB = `create table t(a int, b text unique, c); insert into t values(1,'x',null);
create table u(a); create table p(id integer primary key); create table ch(pid references p(id));`

// oddDB has what .dump must take care of: AUTOINCREMENT, names that are
// keywords or need quoting, generated columns, a STRICT table, a virtual
// table (FTS5), a trigger, a view, WITHOUT ROWID, and awkward values.
const oddDB = `create table seq(id integer primary key autoincrement, v);
insert into seq(v) values (1.0), (2.5), (-0.0), (1e300), (9007199254740993), ('a'||char(13)||char(10)||'b'), (x'deadbeef'), (''), (null);
create table "select"("from" int, "a b" text, [c]);
insert into "select" values (1, 'x''y', 'z');
create table gen(a int, b int generated always as (a*2) stored, c as (a+1));
insert into gen(a) values (5);
create table st(a int, b text) strict;
insert into st values(1,'s');
create virtual table ft using fts5(body);
insert into ft values('hello world');
create trigger trg after insert on seq begin insert into st values(new.id, 'trig'); end;
create view v1 as select * from seq;
create index "idx x" on "select"("a b");
create table wr(k primary key, v) without rowid;
insert into wr values('k1', 'v1');`

var sqlCases = []sqlCase{
	// SQL from arguments, in-memory databases, values.
	{args: `:memory: "select 1, 2.5, null, x'41', 'a'"`},
	{args: `"" "select 'no db', 1e100, -0.0, 1/3.0, 2/3.0, 100.0, 1e15, 1e16, 0.1+0.2"`},
	{args: `:memory: "select 9223372036854775807, -9223372036854775808, 1.5e-7, 123456789.123456789, 3.0e-5"`},
	{args: `:memory: "select 1; select 2" "select 3"`},
	{args: `:memory: "create table t(a); insert into t values(1),(2); select sum(a) from t"`},
	{args: `:memory: "select abs(-9223372036854775808)"`},
	{args: `:memory: "select * from nope"`},
	{args: `:memory: "select nope from (select 1 as a)"`},
	{args: `:memory: "selec 1"`},
	{args: `:memory: "select 1; select * from zz; select 2;"`},
	{args: `:memory: "create table t(a unique); insert into t values(1); insert into t values(1); select 'after'"`},
	{args: `:memory: "select abs(1,2)"`},
	{args: `:memory: "select (1"`},
	{args: `-unknownflag :memory: "select 1"`},
	// Output modes.
	{args: `-list -header people.db "select * from people"`, dbs: map[string]string{"people.db": people}},
	{args: `-csv -header people.db "select * from people"`, dbs: map[string]string{"people.db": people}},
	{args: `-json people.db "select * from people"`, dbs: map[string]string{"people.db": people}},
	{args: `-line people.db "select * from people"`, dbs: map[string]string{"people.db": people}},
	{args: `-column people.db "select * from people"`, dbs: map[string]string{"people.db": people}},
	{args: `-column -noheader people.db "select id, name from people"`, dbs: map[string]string{"people.db": people}},
	{args: `-box people.db "select * from people"`, dbs: map[string]string{"people.db": people}},
	{args: `-markdown people.db "select * from people"`, dbs: map[string]string{"people.db": people}},
	{args: `-table people.db "select * from people"`, dbs: map[string]string{"people.db": people}},
	{args: `-tabs -header people.db "select * from people"`, dbs: map[string]string{"people.db": people}},
	{args: `-html -header people.db "select * from people"`, dbs: map[string]string{"people.db": people}},
	{args: `-insert people.db "select * from people"`, dbs: map[string]string{"people.db": people}},
	{args: `-quote -header people.db "select * from people"`, dbs: map[string]string{"people.db": people}},
	{args: `-separator ';' -nullvalue NULL people.db "select id, age from people"`, dbs: map[string]string{"people.db": people}},
	{args: `-header -separator '::' -newline '<EOL>' people.db "select id, name from people"`, dbs: map[string]string{"people.db": people}},
	{args: `-ascii people.db "select id, name from people"`, dbs: map[string]string{"people.db": people}},
	{args: `-json :memory: "select 1 where 0"`},
	{args: `-box :memory: "select 'a	tab' as x, 'wide ünïcödé' as y, 'line1
line2' as z"`},
	// Dot-commands from stdin and arguments.
	{args: `people.db`, stdin: ".tables\n.indexes\n.schema\n.schema peo%\n.schema --indent people\n", dbs: map[string]string{"people.db": people}},
	{args: `people.db .dump`, dbs: map[string]string{"people.db": people}},
	{args: `people.db ".dump people"`, dbs: map[string]string{"people.db": people}},
	{args: `people.db ".dump --data-only" ".dump --newlines"`, dbs: map[string]string{"people.db": people}},
	{args: `people.db`, stdin: ".mode csv\n.headers on\nselect * from people limit 2;\n.mode list\n.separator , \\n\nselect id,name from people;\n.nullvalue (null)\nselect age from people;\n", dbs: map[string]string{"people.db": people}},
	{args: `people.db`, stdin: ".mode insert newtab\nselect id, name from people;\n.mode quote\nselect * from people;\n.mode tcl\nselect name from people;\n", dbs: map[string]string{"people.db": people}},
	{args: `people.db`, stdin: ".width 3 -6\n.mode column\nselect id, name, age from people;\n.show\n", dbs: map[string]string{"people.db": people}},
	{args: `:memory:`, stdin: ".print hello \"quoted\\tword\" 'single\\t'\n.changes on\ncreate table t(a);\ninsert into t values(1),(2);\nupdate t set a=a+1;\n.changes off\ndelete from t;\n"},
	{args: `:memory:`, stdin: ".timer off\nselect 1;\n.bail\n.mode bogus\n.headers\n.nosuchcommand\nselect 2;\n"},
	{args: `:memory:`, stdin: "select 1;\n.quit\nselect 2;\n"},
	{args: `:memory:`, stdin: "select 1;\n.exit 3\nselect 2;\n"},
	{args: `:memory:`, stdin: ".mode\n.mode box --wrap 5\n.mode\nselect 'abcdefghijklmnop' as a, 2 as b;\n.mode table --wordwrap on --wrap 8\nselect 'the quick brown fox jumps' as s;\n"},
	// Statement splitting, multi-line input, comments and triggers.
	{args: `t.db`, stdin: "create table t(a, b);\ncreate trigger tr after insert on t begin\n  update t set b = 'trig; gered' where rowid = new.rowid;\nend;\ninsert into t(a) values('x;y'); -- a comment; with semicolons\n/* block; comment */ select * from t;\nselect 'multi\nline string';\nselect 1; select 2\n;\n"},
	{args: `t.db`, stdin: "create table t(a);\ninsert into t values(1);\nselect * from nope;\ninsert into t values(2);\nselect count(*) from t;\nselect 1 +;\nselect 'end';\n"},
	{args: `-bail t.db`, stdin: "create table t(a);\nselect * from nope;\ninsert into t values(2);\n"},
	{args: `:memory:`, stdin: "select 1 from\n  (select 2)\n  where nope = 3;\n"},
	{args: `:memory:`, stdin: "create table t(a unique);\ninsert into t values(1);\ninsert into t values(1);\nselect 'still here';\n"},
	{args: `:memory:`, stdin: "select 1;\nselect 'unterminated"},
	{args: `:memory:`, stdin: "select 1\n"},
	{args: `:memory:`, stdin: "  \n\n-- only a comment\nselect 5;\n"},
	// .read, .output/.once, -cmd, -batch, -readonly.
	{args: `t.db`, stdin: ".read setup.sql\nselect count(*) from t;\n.read missing.sql\n", files: map[string]string{"setup.sql": "create table t(x);\ninsert into t values (1),(2),(3);\n.mode json\nselect * from t;\nselect * from nope;\n"}},
	{args: `t.db`, stdin: ".output out.txt\nselect 'to file';\n.output\nselect 'to stdout';\n.once once.txt\nselect 'once';\nselect 'after once';\n"},
	{args: `-cmd ".mode csv" -cmd ".headers on" :memory: "select 1 as a, 'x y' as b"`},
	{args: `-batch -cmd "create table t(a)" t.db`, stdin: "insert into t values(5);\nselect * from t;\n"},
	{args: `-readonly people.db "delete from people"`, dbs: map[string]string{"people.db": people}},
	{args: `-readonly people.db "select count(*) from people"`, dbs: map[string]string{"people.db": people}},
	{args: `-bail -cmd "select * from nope" :memory: "select 1"`},
	// .import.
	{args: `imp.db`, stdin: ".import --csv data.csv t\n.schema t\nselect * from t;\n", files: map[string]string{"data.csv": "a,b,a\n1,x,2.5\n3,\"y,z\",\n\"q\"\"uote\",\"multi\nline\",7\n"}},
	{args: `imp.db`, stdin: "create table t(x, y);\n.import --csv --skip 1 data.csv t\n.mode csv\n.import data2.csv t\nselect * from t;\n", files: map[string]string{"data.csv": "head1,head2\n1,2\n3\n4,5,6\n", "data2.csv": "7,8\r\n9,10\r\n"}},
	{args: `imp.db`, stdin: ".import missing.csv t\n.import\n.import --bogus f t\n"},
	{args: `imp.db`, stdin: ".mode tabs\n.import data.tsv t\nselect * from t;\n", files: map[string]string{"data.tsv": "k\tv\na\t1\nb\t2\n"}},
	// Query plans, .open, -init, interactive sessions.
	{args: `t.db`, dbs: map[string]string{"t.db": errDB + "create index ti on t(a);"}, stdin: `explain query plan select * from t where a = 1;
explain query plan select * from t join u on t.a = u.a where b in (select a from u);
.eqp on
select * from t where a = 1;
select 1 union all select 2 order by 1;
.eqp off
.open other.db
create table z(q);
insert into z values(1);
.tables
.open --readonly t.db
delete from t;
.open --new t2.db
.tables
.open
select 1;
`},
	{args: `-init init.sql t.db "select * from t"`, dbs: map[string]string{"t.db": errDB}, files: map[string]string{"init.sql": ".mode csv\n.headers on\n"}},
	{args: `-init missing.sql t.db "select * from t"`, dbs: map[string]string{"t.db": errDB}},
	{args: `-interactive :memory:`, stdin: "select 1;\nselect\n2;\nselec 3;\n.quit\n", banner: true},
	{args: `-interactive`, stdin: "create table t(a);\n.tables\n", banner: true},
	// Awkward schemas and values.
	{args: `d.db .dump`, dbs: map[string]string{"d.db": oddDB}},
	{args: `d.db ".dump --preserve-rowids seq"`, dbs: map[string]string{"d.db": oddDB}},
	{args: `d.db ".schema --indent" .tables ".indexes sel%"`, dbs: map[string]string{"d.db": oddDB}},
	{args: `d.db`, dbs: map[string]string{"d.db": oddDB}, stdin: ".headers on\n" + strings.Repeat("select * from seq;\n", 1) +
		".mode csv\nselect * from seq;\n.mode json\nselect * from seq;\n.mode line\nselect * from seq;\n.mode box\nselect * from seq;\n" +
		".mode html\nselect * from seq;\n.mode insert\nselect * from seq;\n.mode quote\nselect * from seq;\n.mode table\nselect * from \"select\";\n" +
		".mode qbox\nselect * from seq;\n.mode column --wordwrap on --wrap 4\nselect 'hello world this is long' as t;\n.show\n"},
	{args: `d.db`, dbs: map[string]string{"d.db": oddDB}, files: map[string]string{"i.csv": "x,y\n1,2\n", "asc.txt": "a\x1fb\x1e1\x1f2\x1e"},
		stdin: ".import --ascii asc.txt newasc\nselect * from newasc;\n.import -v --csv i.csv newi\n.import -v -v --csv i.csv newi\n.mode csv\n.import -v i.csv newi\nselect * from newi;\n.import --csv --schema main i.csv newj\n.schema newj\n.import --csv i.csv seq\n.import --csv i.csv \"select\"\n"},
	{args: `d.db ".import --csv i.csv seq"`, dbs: map[string]string{"d.db": oddDB}, files: map[string]string{"i.csv": "x,y\n1,2\n"}},
	// Databases that cannot be opened or read, and usage errors.
	{args: `bad.db .schema`, files: map[string]string{"bad.db": "hello, not a database\n"}},
	{args: `bad.db .dump`, files: map[string]string{"bad.db": "hello, not a database\n"}},
	{args: `bad.db "select 1"`, files: map[string]string{"bad.db": "hello, not a database\n"}},
	{args: `nodir/x.db "select 1"`},
	{args: `-readonly new.db "select 1"`},
	{args: `-help`},
	{args: `-separator`},
	{args: `:memory: ".exit 7" "select 2"`},
	{args: `:memory: "" ";" "select 1;;;select 2"`},
	{args: `-header -noheader -newline "--" :memory: "select 1 as a"`},
	{args: `-cmd ".bogus" :memory: "select 1"`},
	// A PRAGMA's syntax error is located without compiling its prefixes in
	// the database (foreign_keys must stay off here).
	{args: `:memory:`, stdin: "pragma foreign_keys=on x;\npragma foreign_keys;\npragma nope;\npragma table_info(;\ncreate table p(id integer primary key); create table c(x references p(id));\ninsert into c values(5);\nselect count(*) from c;\n"},
	// The command-line modes do not wrap long values; .mode wraps at 60.
	{args: `-column :memory: "select '` + strings.Repeat("word ", 30) + `' as long, 'ünï' as 'naïve col'"`},
	{args: `-box :memory: "select '` + strings.Repeat("word ", 30) + `' as long" .show ".mode box" .show "select '` + strings.Repeat("word ", 30) + `'"`},
	{args: `-json :memory: "select 'ünï' as 'ключ', '\"q\"\\' as b, char(1,31,127) as c, 1e-7 as d, 123456789012345678 as e, 0.1+0.2 as f"`},
	{args: `-insert :memory: "select 1.0, 2.0e10, -3.0, 9.2e18, 1e19, 0.5, 1e300*10"`},
	// Output larger than the shell's buffer, to stdout and to files.
	{args: `:memory: "with recursive c(x) as (select 1 union all select x+1 from c limit 6000) select x, x*1.5, x/7.0, 'str'||x, null from c"`},
	{args: `:memory:`, stdin: ".output big.txt\nwith recursive c(x) as (select 1 union all select x+1 from c limit 6000) select x, x*0.1 from c;\n.once small.txt\nselect 'once';\nselect 'stdout';\n.output big2.txt\nselect 'unclosed at exit';\n"},
	// Blobs, NULLs and text with odd bytes in each mode.
	{args: `:memory:`, stdin: "create table b(x);\ninsert into b values(x'00414243'), (x'41420043'), ('te''xt'), (null), (1.5);\n.mode list\nselect x, typeof(x) from b;\n.mode json\nselect x from b;\n.mode quote\nselect x from b;\n.mode insert\nselect x from b;\n.mode line\nselect x from b;\n.mode csv\nselect x from b;\n"},
	// Error messages: where SQLite points at the error, and exit statuses.
	{args: `t.db "select a from t join u;"`, dbs: map[string]string{"t.db": errDB}},
	{args: `t.db "select t.nope from t"`, dbs: map[string]string{"t.db": errDB}},
	{args: `t.db "select x.a from t"`, dbs: map[string]string{"t.db": errDB}},
	{args: `t.db "insert into t(a, nope) values(1, 2)"`, dbs: map[string]string{"t.db": errDB}},
	{args: `t.db "insert into t values(1,2)"`, dbs: map[string]string{"t.db": errDB}},
	{args: `t.db "update t set nope = 1"`, dbs: map[string]string{"t.db": errDB}},
	{args: `t.db "update t set a = 1 where nope = 2"`, dbs: map[string]string{"t.db": errDB}},
	{args: `t.db "create index t on t(a)"`, dbs: map[string]string{"t.db": errDB}},
	{args: `t.db "drop table nope"`, dbs: map[string]string{"t.db": errDB}},
	{args: `t.db "select sum(a) over () , nope(a) from t"`, dbs: map[string]string{"t.db": errDB}},
	{args: `t.db "select max() from t"`, dbs: map[string]string{"t.db": errDB}},
	{args: `t.db "select * from t order by 5"`, dbs: map[string]string{"t.db": errDB}},
	{args: `t.db "select 1 union select 1, 2"`, dbs: map[string]string{"t.db": errDB}},
	{args: `t.db "select json('{bad')"`, dbs: map[string]string{"t.db": errDB}},
	{args: `t.db "pragma foreign_keys=on; insert into ch values(5)"`, dbs: map[string]string{"t.db": errDB}},
	{args: `t.db "with x as (select 1) select * from y"`, dbs: map[string]string{"t.db": errDB}},
	{args: `t.db "select 'a' || from t"`, dbs: map[string]string{"t.db": errDB}},
	{args: `t.db "alter table t add column a"`, dbs: map[string]string{"t.db": errDB}},
	{args: `t.db "create trigger tr after insert on nope begin select 1; end"`, dbs: map[string]string{"t.db": errDB}},
	{args: `t.db "select 1e999, -1e999, 1e-999, zeroblob(3), typeof(zeroblob(2))"`, dbs: map[string]string{"t.db": errDB}},
	{args: `t.db "select CAST('12abc' AS INTEGER), '3' + 4, 10/3, 10/3.0, 10 % 3"`, dbs: map[string]string{"t.db": errDB}},
	{args: `t.db`, stdin: "select a from t join u;\nselect t.nope from t;\nselect x.a from t;\ninsert into t(a, nope) values(1, 2);\ninsert into t values(1,2);\nupdate t set nope = 1;\nupdate t set a = 1 where nope = 2;\ncreate index t on t(a);\ndrop table nope;\nselect sum(a) over () , nope(a) from t;\nselect max() from t;\nselect * from t order by 5;\nselect 1 union select 1, 2;\nselect json('{bad');\npragma foreign_keys=on; insert into ch values(5);\nwith x as (select 1) select * from y;\nselect 'a' || from t;\nalter table t add column a;\ncreate trigger tr after insert on nope begin select 1; end;\nselect 1e999, -1e999, 1e-999, zeroblob(3), typeof(zeroblob(2));\nselect CAST('12abc' AS INTEGER), '3' + 4, 10/3, 10/3.0, 10 % 3;\n", dbs: map[string]string{"t.db": errDB}},
}

// sqliteEnv is the environment of both sides.
var sqliteEnv = []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "TZ=UTC"}

func hostSqlite(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("/usr/bin/sqlite3")
	if err != nil {
		t.Fatalf("host sqlite3 (the reference; .ci/run installs it): %v", err)
	}
	return p
}

// makeSQLFixture makes the case's files in dir.
func makeSQLFixture(t *testing.T, dir string, c sqlCase) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range c.files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, sql := range c.dbs {
		cmd := exec.Command(hostSqlite(t), filepath.Join(dir, name))
		cmd.Stdin = strings.NewReader(sql)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("making %s: %v\n%s", name, err, out)
		}
	}
}

// copyDir copies the regular files of src into dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// dirState lists the files of dir: databases by the host sqlite3's dump
// of them (their bytes differ with the library version), others by
// content.
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.HasPrefix(b, []byte("SQLite format 3\x00")) {
			out, err := exec.Command(hostSqlite(t), p, ".dump").CombinedOutput()
			if err != nil {
				t.Fatalf("dumping %s: %v\n%s", p, err, out)
			}
			m[e.Name()] = "database:\n" + string(out)
			continue
		}
		m[e.Name()] = string(b)
	}
	return m
}

type sqlResult struct {
	stdout, stderr string
	code           int
}

func hostSqlRun(t *testing.T, dir, args, stdin string) sqlResult {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", "sqlite3 "+args)
	cmd.Dir = dir
	cmd.Env = sqliteEnv
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return sqlResult{out.String(), errb.String(), code}
}

func TestSqliteMatchesHost(t *testing.T) {
	hostSqlite(t)
	want, got := t.TempDir(), t.TempDir()
	h := newHost(t, vmhost.Config{Mounts: []vm.Mount{{Path: "/mnt/host", HostDir: got}}})
	matched := 0
	for i, c := range sqlCases {
		name := fmt.Sprintf("c%02d", i)
		t.Run(name, func(t *testing.T) {
			wd, gd := filepath.Join(want, name), filepath.Join(got, name)
			makeSQLFixture(t, wd, c)
			copyDir(t, wd, gd)
			w := hostSqlRun(t, wd, c.args, c.stdin)
			r := vmtest.Run(t, h, c.stdin, []string{"TZ=UTC"}, "sh", "-c", "cd /mnt/host/"+name+" && sqlite3 "+c.args)
			g := sqlResult{r.Stdout, r.Stderr, r.Exit.Code}
			if c.banner {
				g.stdout, w.stdout = dropFirstLine(g.stdout), dropFirstLine(w.stdout)
			}
			if g != w {
				t.Errorf("sqlite3 %s\nstdin: %q\nVM:   code %d\nstdout: %q\nstderr: %q\nhost: code %d\nstdout: %q\nstderr: %q",
					c.args, c.stdin, g.code, g.stdout, g.stderr, w.code, w.stdout, w.stderr)
				return
			}
			ws, gs := dirState(t, wd), dirState(t, gd)
			for _, f := range slices.Sorted(func(yield func(string) bool) {
				for k := range ws {
					if !yield(k) {
						return
					}
				}
			}) {
				if gs[f] != ws[f] {
					t.Errorf("sqlite3 %s: file %s differs\nVM:   %q\nhost: %q", c.args, f, gs[f], ws[f])
				}
			}
			if len(gs) != len(ws) {
				t.Errorf("sqlite3 %s: files %v, host %v", c.args, keys(gs), keys(ws))
			}
			if !t.Failed() {
				matched++
			}
		})
	}
	t.Logf("%d of %d cases match the host's sqlite3", matched, len(sqlCases))
}

func dropFirstLine(s string) string {
	_, rest, _ := strings.Cut(s, "\n")
	return rest
}

func keys(m map[string]string) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	slices.Sort(k)
	return k
}

// The VM's SQLite library is the one compiled into python3 (3.42.0), not
// Debian's 3.40.1: what reports the version says so.
func TestSqliteVersion(t *testing.T) {
	h := newHost(t, vmhost.Config{})
	r := vmtest.Run(t, h, "", nil, "sqlite3", "-version")
	if !strings.HasPrefix(r.Stdout, "3.42.0 2023-05-16 ") || r.Exit.Code != 0 {
		t.Fatalf("sqlite3 -version: %q %q %+v", r.Stdout, r.Stderr, r.Exit)
	}
	r = vmtest.Run(t, h, ".version\n", nil, "sqlite3")
	if !strings.HasPrefix(r.Stdout, "SQLite 3.42.0 2023-05-16 ") || r.Exit.Code != 0 {
		t.Fatalf("sqlite3 .version: %q %q %+v", r.Stdout, r.Stderr, r.Exit)
	}
}

// A runaway query runs inside the python3 WebAssembly instance, so the
// VM's CPU-time limit and the caller's timeout end it like any guest.
func TestSqliteRunawayQueryBounded(t *testing.T) {
	const runaway = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c;"
	h := newHost(t, vmhost.Config{Limits: kernel.Limits{CPUTime: 3 * time.Second}})
	r := vmtest.Run(t, h, "", nil, "sqlite3", ":memory:", runaway)
	if r.Exit.Outcome != vmhost.TimedOut || r.Exit.Reason != vmhost.ReasonCPUTime || r.Exit.Code != 124 {
		t.Errorf("runaway query under a CPU limit: %+v stdout %q stderr %q", r.Exit, r.Stdout, r.Stderr)
	}
	h2 := newHost(t, vmhost.Config{})
	ex, err := h2.Run(context.Background(), vmhost.RunSpec{Argv: []string{"sqlite3", ":memory:", runaway},
		Env: vmtest.Env, Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if ex.Outcome != vmhost.TimedOut || ex.Reason != vmhost.ReasonTimeout || ex.Code != 124 {
		t.Errorf("runaway query under a timeout: %+v", ex)
	}
}
