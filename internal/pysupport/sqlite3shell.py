# secexec's sqlite3 command: the SQLite command-line shell (as Debian's
# sqlite3 3.40 behaves) written in Python over CPython's sqlite3 module,
# which is the real SQLite library compiled into the VM's python3. No
# WASI build of the C shell exists, so this program reproduces its
# observable behaviour: argument handling, line-by-line input with
# statement completion, the output modes, the dot-commands listed in
# docs/python-and-git.md, and its error messages and exit statuses.
import os
import sqlite3
import sys
import time

PROG = "sqlite3"

# ---------------------------------------------------------------- floats
# SQLite 3.40 formats REAL values with its own printf ("%!.15g" for text,
# "%!.20g" for quote/insert/json), computing digits in x86-64 long
# double (64-bit mantissa). The digits beyond the 17th are artefacts of
# that arithmetic, so it is emulated exactly with integers rounded to
# 64 bits after every operation (sqlite3extra.slow_g) where Python's own
# correctly rounded digits could differ.


def sqlite_g(r, precision, altform2):
    """SQLite 3.40's printf("%!.Ng") (altform2) or "%.Ng" of a double."""
    if precision == 15 and altform2 and (1e-4 <= r < 1e15 or -1e15 < r <= -1e-4):
        # Python's shortest round-trip digits: when there are at most 15
        # of them, the value is far from a rounding boundary at the 15th
        # digit, and repr already has SQLite's fixed-point form.
        s = repr(r)
        if "e" not in s and len(s.replace("-", "").replace(".", "").strip("0")) <= 15:
            return s
    if r != r:
        return "NaN"
    prefix = ""
    if r < 0.0:
        r = -r
        prefix = "-"
    if r == float("inf"):
        return prefix + "Inf"
    if precision == 15 and 1e-100 < r < 1e100:
        # Away from a rounding boundary at the 15th digit, long double
        # arithmetic gives the correctly rounded digits: Python's own.
        ds = "%.24e" % r
        tail = ds[16:21]
        if not ("49990" <= tail <= "50010"):
            s = "%.14e" % r
            mant, ex = s.split("e")
            exp = int(ex)
            digits = mant.replace(".", "")
            if exp < -4 or exp > 14:
                d = digits.rstrip("0")
                body = d[0] + "." + (d[1:] or "0")
                return "%s%se%s%02d" % (prefix, body, "-" if exp < 0 else "+", abs(exp))
            if exp < 0:
                body = "0." + "0" * (-exp - 1) + digits.rstrip("0")
            else:
                ip, fp = digits[:exp + 1], digits[exp + 1:].rstrip("0")
                body = ip + "." + (fp or "0")
            return prefix + body
    return extra().slow_g(r, precision, altform2, prefix)


def real_text(r):
    """The text SQLite gives a REAL value (sqlite3_column_text)."""
    return sqlite_g(r, 15, True)


def real_quoted(r):
    return sqlite_g(r, 20, True)


# ---------------------------------------------------------------- values

def to_text(v):
    """sqlite3_column_text of a value as bytes (None for NULL)."""
    t = type(v)
    if t is int:
        return b"%d" % v
    if t is str:
        b = v.encode("utf-8", "surrogateescape")
    elif t is float:
        return real_text(v).encode()
    elif v is None:
        return None
    else:
        b = bytes(v)
    if b"\0" in b:
        return b[:b.index(b"\0")]
    return b


def enc(s):
    if isinstance(s, bytes):
        return s
    return s.encode("utf-8", "surrogateescape")


def cstr(s):
    """s as bytes cut at its first NUL, as C's %s prints it."""
    b = enc(s)
    i = b.find(b"\0")
    return b if i < 0 else b[:i]


def is_space(c):
    return c in " \t\n\v\f\r"


def is_digit(c):
    return "0" <= c <= "9"


# SQLite's keywords: quoteChar quotes names that are keywords.
KEYWORDS = set("""ABORT ACTION ADD AFTER ALL ALTER ALWAYS ANALYZE AND AS ASC
ATTACH AUTOINCREMENT BEFORE BEGIN BETWEEN BY CASCADE CASE CAST CHECK COLLATE
COLUMN COMMIT CONFLICT CONSTRAINT CREATE CROSS CURRENT CURRENT_DATE
CURRENT_TIME CURRENT_TIMESTAMP DATABASE DEFAULT DEFERRABLE DEFERRED DELETE DESC
DETACH DISTINCT DO DROP EACH ELSE END ESCAPE EXCEPT EXCLUDE EXCLUSIVE EXISTS
EXPLAIN FAIL FILTER FIRST FOLLOWING FOR FOREIGN FROM FULL GENERATED GLOB GROUP
GROUPS HAVING IF IGNORE IMMEDIATE IN INDEX INDEXED INITIALLY INNER INSERT
INSTEAD INTERSECT INTO IS ISNULL JOIN KEY LAST LEFT LIKE LIMIT MATCH
MATERIALIZED NATURAL NO NOT NOTHING NOTNULL NULL NULLS OF OFFSET ON OR ORDER
OTHERS OUTER OVER PARTITION PLAN PRAGMA PRECEDING PRIMARY QUERY RAISE RANGE
RECURSIVE REFERENCES REGEXP REINDEX RELEASE RENAME REPLACE RESTRICT RETURNING
RIGHT ROLLBACK ROW ROWS SAVEPOINT SELECT SET TABLE TEMP TEMPORARY THEN TIES TO
TRANSACTION TRIGGER UNBOUNDED UNION UNIQUE UPDATE USING VACUUM VALUES VIEW
VIRTUAL WHEN WHERE WINDOW WITH WITHOUT""".split())


def quote_char(name):
    if not name:
        return '"'
    c0 = name[0]
    if not (c0.isascii() and (c0.isalpha() or c0 == "_")):
        return '"'
    for c in name:
        if not (c.isascii() and (c.isalnum() or c == "_")):
            return '"'
    return '"' if name.upper() in KEYWORDS else ""


def quote_ident(name, q='"'):
    return q + name.replace(q, q + q) + q


def qid(name):
    """name, quoted if it must be (appendText with quoteChar)."""
    return quote_ident(name) if quote_char(name) else name


def sql_quote(s):
    return "'" + s.replace("'", "''") + "'"


def strlen_char(b):
    return sum(1 for x in b if (x & 0xC0) != 0x80)


def width_print(w, b):
    """utf8_width_print: b (bytes) padded or cut to |w| characters."""
    aw = -w if w < 0 else w
    n = 0
    i = 0
    cut = None
    while i < len(b):
        if (b[i] & 0xC0) != 0x80:
            n += 1
            if n == aw:
                i += 1
                while i < len(b) and (b[i] & 0xC0) == 0x80:
                    i += 1
                cut = i
                break
        i += 1
    if n >= aw:
        return b[:cut] if cut is not None else b
    if w < 0:
        return b" " * (aw - n) + b
    return b + b" " * (aw - n)


def integer_value(z):
    mult = [("KiB", 1024), ("MiB", 1024 * 1024), ("GiB", 1024 ** 3), ("KB", 1000),
            ("MB", 1000000), ("GB", 1000000000), ("K", 1000), ("M", 1000000),
            ("G", 1000000000)]
    neg = False
    i = 0
    if z[:1] == "-":
        neg = True
        i = 1
    elif z[:1] == "+":
        i = 1
    v = 0
    if z[i:i + 2] == "0x":
        i += 2
        while i < len(z) and z[i] in "0123456789abcdefABCDEF":
            v = v * 16 + int(z[i], 16)
            i += 1
    else:
        while i < len(z) and is_digit(z[i]):
            v = v * 10 + ord(z[i]) - 48
            i += 1
    rest = z[i:]
    for suf, m in mult:
        if suf.lower() == rest.lower():
            v *= m
            break
    v = -v if neg else v
    v &= (1 << 64) - 1
    if v >= 1 << 63:
        v -= 1 << 64
    return v


def c_int(v):
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def boolean_value(z):
    if z[:2] == "0x":
        i = 2
        while i < len(z) and z[i] in "0123456789abcdefABCDEF":
            i += 1
    else:
        i = 0
        while i < len(z) and is_digit(z[i]):
            i += 1
    if i > 0 and i == len(z):
        return c_int(integer_value(z))
    if z.lower() in ("on", "yes"):
        return 1
    if z.lower() in ("off", "no"):
        return 0
    err('ERROR: Not a boolean value: "%s". Assuming "no".\n' % z)
    return 0


def resolve_backslashes(z):
    if "\\" not in z:
        return z
    out = []
    i = 0
    esc = {"a": "\a", "b": "\b", "t": "\t", "n": "\n", "v": "\v", "f": "\f",
           "r": "\r", '"': '"', "'": "'", "\\": "\\"}
    while i < len(z):
        c = z[i]
        if c == "\\" and i + 1 < len(z):
            i += 1
            c = z[i]
            if c in esc:
                c = esc[c]
            elif "0" <= c <= "7":
                v = ord(c) - 48
                for _ in range(2):
                    if i + 1 < len(z) and "0" <= z[i + 1] <= "7":
                        i += 1
                        v = (v << 3) + ord(z[i]) - 48
                c = chr(v & 0xFF) if v & 0xFF < 0x80 else bytes([v & 0xFF]).decode("utf-8", "surrogateescape")
        out.append(c)
        i += 1
    return "".join(out)


# ---------------------------------------------------------------- SQL text

def skip_token(sql, i):
    """Index just past the SQL token starting at sql[i] (whitespace and
    comments count as tokens)."""
    n = len(sql)
    c = sql[i]
    if is_space(c):
        while i < n and is_space(sql[i]):
            i += 1
        return i
    if c == "-" and sql.startswith("--", i):
        j = sql.find("\n", i)
        return n if j < 0 else j + 1
    if c == "/" and sql.startswith("/*", i):
        j = sql.find("*/", i + 2)
        return n if j < 0 else j + 2
    if c in "'\"`[":
        close = "]" if c == "[" else c
        j = i + 1
        while j < n:
            if sql[j] == close:
                if close != "]" and j + 1 < n and sql[j + 1] == close:
                    j += 2
                    continue
                return j + 1
            j += 1
        return n
    if c.isalnum() or c == "_" or c == "$" or ord(c) >= 0x80:
        j = i + 1
        while j < n and (sql[j].isalnum() or sql[j] in "_$" or ord(sql[j]) >= 0x80):
            j += 1
        if c == "x" or c == "X":
            if j == i + 1 and j < n and sql[j] == "'":
                return skip_token(sql, j)
        # Numbers such as 1.5e-3.
        if is_digit(c):
            while j < n and (sql[j] == "." or is_digit(sql[j]) or
                             (sql[j] in "+-" and sql[j - 1] in "eE") or sql[j].isalnum()):
                j += 1
        return j
    if c == "." and i + 1 < n and is_digit(sql[i + 1]):
        j = i + 1
        while j < n and (is_digit(sql[j]) or sql[j].isalnum() or (sql[j] in "+-" and sql[j - 1] in "eE")):
            j += 1
        return j
    for op in ("||", "<=", ">=", "==", "!=", "<>", "<<", ">>", "->>", "->"):
        if sql.startswith(op, i):
            if op == "->" and sql.startswith("->>", i):
                return i + 3
            return i + len(op)
    return i + 1


def is_blank_token(tok):
    return tok[0].isspace() or tok.startswith("--") or tok.startswith("/*")


def tokens(sql):
    i = 0
    out = []
    while i < len(sql):
        j = skip_token(sql, i)
        out.append((i, sql[i:j]))
        i = j
    return out


def split_statements(sql):
    """Yield (start, end) of each statement of sql, the way repeated
    sqlite3_prepare_v2 calls consume it: up to and including a ';' at
    which the text so far is complete."""
    i = 0
    n = len(sql)
    start = 0
    while i < n:
        j = skip_token(sql, i)
        if sql[i] == ";" and sqlite3.complete_statement(sql[start:j]):
            yield start, j
            start = j
        i = j
    if start < n:
        yield start, n


def has_dark(sql):
    return any(not is_blank_token(t) and t != ";" for _, t in tokens(sql))


# quickscan states for line-oriented input: where the previous line left
# the scanner (inside a comment or quote) and whether it ended in ';'.
class QuickScan:
    def __init__(self):
        self.wait = ""
        self.dark = False
        self.semi = False

    def scan(self, line):
        i = 0
        n = len(line)
        while i < n:
            if self.wait:
                if self.wait == "*":
                    j = line.find("*/", i)
                    if j < 0:
                        return
                    i = j + 2
                    self.wait = ""
                    continue
                j = line.find(self.wait, i)
                if j < 0:
                    return
                i = j + 1
                if self.wait != "]" and i < n and line[i] == self.wait:
                    i += 1
                    continue
                self.wait = ""
                continue
            c = line[i]
            i += 1
            if is_space(c):
                continue
            if c == "-" and i < n and line[i] == "-":
                j = line.find("\n", i)
                if j < 0:
                    return
                i = j + 1
                continue
            if c == ";":
                self.semi = True
                continue
            if c == "/" and i < n and line[i] == "*":
                i += 1
                self.wait = "*"
                continue
            if c in "[`'\"":
                self.wait = "]" if c == "[" else c
                self.dark = True
                self.semi = False
                continue
            self.semi = False
            self.dark = True

    def plain_white(self):
        return not self.wait and not self.dark

    def semi_term(self):
        return not self.wait and self.semi


# ---------------------------------------------------------------- shell


def err(s):
    os.write(2, enc(s))


class Exit(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


class SQLError(Exception):
    """An error of shell_exec: its message (with the "in prepare, " or
    "stepping, " phase) and SQLite's result code."""

    def __init__(self, msg, rc):
        super().__init__(msg)
        self.msg = msg
        self.rc = rc


BOX = {"13": "\u2502", "24": "\u2500", "23": "\u250c", "34": "\u2510", "12": "\u2514",
       "14": "\u2518", "123": "\u251c", "134": "\u2524", "234": "\u252c",
       "124": "\u2534", "1234": "\u253c"}


class Out:
    """A buffered byte stream to a file (stdout or an .output file):
    every write to a file is a call out of the WebAssembly guest, so
    output is gathered here and written in large pieces."""

    LIMIT = 1 << 16

    def __init__(self, f, name=""):
        self.f = f
        self.name = name
        self.buf = []
        self.size = 0

    def write(self, s):
        b = enc(s)
        self.buf.append(b)
        self.size += len(b)
        if self.size >= self.LIMIT:
            self.flush()

    def flush(self):
        if self.buf:
            data = b"".join(self.buf)
            self.buf = []
            self.size = 0
            try:
                self.f.write(data)
            except OSError:
                pass
        try:
            self.f.flush()
        except OSError:
            pass

    def close(self):
        self.flush()
        if self.f is not sys.stdout.buffer:
            self.f.close()


class Shell:
    def __init__(self):
        self.db = None
        self.filename = ":memory:"
        self.readonly = False
        self.mode = "list"
        self.col_sep = "|"
        self.row_sep = "\n"
        self.null = ""
        self.show_header = False
        self.header_set = False
        self.widths = []
        # The command-line modes do not wrap; .mode sets --wrap 60.
        self.wrap = 0
        self.wordwrap = False
        self.cm_quote = False
        self.dest_table = "table"
        self.bail = False
        self.count_changes = False
        self.timer = False
        self.echo = False
        self.stdout = Out(sys.stdout.buffer)
        self.out = self.stdout
        self.outfile = ""
        self.out_count = 0
        self.lineno = 0
        self.nesting = 0
        self.interactive = False
        self.n_err = 0
        self.writable_schema = False
        self.dump_flags = set()
        self.continuing = False
        self.eqp = 0

    # ---- database
    def open_db(self):
        if self.db is not None:
            return
        try:
            if self.readonly:
                uri = "file:" + self.filename.replace("?", "%3f").replace("#", "%23") + "?mode=ro"
                self.db = sqlite3.connect(uri, uri=True, isolation_level=None,
                                          check_same_thread=False, cached_statements=0)
            else:
                self.db = sqlite3.connect(self.filename, isolation_level=None,
                                          check_same_thread=False, cached_statements=0)
        except sqlite3.Error as e:
            err('Error: unable to open database "%s": %s\n' % (self.filename, e))
            raise Exit(1)
        self.db.text_factory = lambda b: b.decode("utf-8", "surrogateescape")

    # ---- statement execution
    def exec_sql(self, sql, ctx=True):
        """shell_exec: run every statement of sql; raise SQLError."""
        for s, e in split_statements(sql):
            stmt = sql[s:e]
            if not has_dark(stmt):
                continue
            rest = sql[s:].lstrip(" \t\n\v\f\r")
            self.run_statement(stmt, rest if ctx else None)

    def run_statement(self, stmt, rest):
        cur = self.db.cursor()
        try:
            if self.eqp and explain_kind(stmt) == 0:
                try:
                    self.output_eqp(self.db.execute("EXPLAIN QUERY PLAN " + stmt.lstrip(" \t\n\v\f\r")))
                except sqlite3.Error:
                    pass
            try:
                cur.execute(stmt)
            except sqlite3.Warning as e:
                raise SQLError("in prepare, " + str(e), 1)
            except sqlite3.Error as e:
                self.raise_error(e, stmt.lstrip(" \t\n\v\f\r"), rest)
            if cur.description is not None:
                names = [d[0] for d in cur.description]
                try:
                    kind = explain_kind(stmt)
                    if kind == 2:
                        self.output_eqp(cur)
                    elif kind == 1 and len(names) == 8:
                        self.output_explain(names, cur)
                    else:
                        self.output_rows(names, cur)
                except sqlite3.Error as e:
                    rc = (getattr(e, "sqlite_errorcode", 1) or 1) & 0xFF
                    raise SQLError("stepping, " + errmsg(e) + (" (%d)" % rc if rc > 1 else ""), rc)
        finally:
            cur.close()

    def raise_error(self, e, stmt, rest):
        """Classify an error of execute as SQLite's prepare or step."""
        rc = (getattr(e, "sqlite_errorcode", 1) or 1) & 0xFF
        msg = errmsg(e)
        phase = "stepping"
        if self.fails_to_prepare(stmt, msg):
            phase = "in prepare"
        s = "%s, %s" % (phase, msg)
        if rc > 1:
            s += " (%d)" % rc
        if phase == "in prepare" and rest is not None:
            s += extra().error_context(self.db, rest, stmt, msg)
        raise SQLError(s, rc)

    def fails_to_prepare(self, stmt, msg):
        ok, m = try_prepare(self.db, stmt)
        return not ok and m == msg

    # ---- output
    def output_rows(self, names, cur):
        mode = self.mode
        if mode in ("column", "table", "box", "markdown"):
            self.output_columnar(names, cur)
            return
        cnt = 0
        out = self.out
        nrow = 0
        for row in cur:
            nrow += 1
            self.output_row(mode, names, row, cnt)
            cnt += 1
        if cnt and mode == "json":
            out.write("]\n")
        elif mode == "count" and nrow:
            self.stdout.write("%d row%s\n" % (nrow, "s" if nrow != 1 else ""))

    def output_eqp(self, *args):
        return extra().output_eqp(self, *args)

    def output_explain(self, *args):
        return extra().output_explain(self, *args)

    def output_row(self, mode, names, row, cnt):
        out = self.out
        null = self.null
        n = len(names)
        if mode in ("off", "count"):
            return
        if mode == "line":
            w = max([5] + [len(enc(c)) for c in names])
            if cnt > 0:
                out.write(self.row_sep)
            for i in range(n):
                v = to_text(row[i])
                name = enc(names[i])
                out.write(b" " * (w - len(name)) + name + b" = " + (v if v is not None else cstr(null)) + enc(self.row_sep))
            return
        if mode == "list":
            if cnt == 0 and self.show_header:
                out.write(enc(self.col_sep).join(cstr(c) for c in names) + enc(self.row_sep))
            nul = cstr(null)
            out.write(enc(self.col_sep).join([nul if v is None else to_text(v) for v in row]) + enc(self.row_sep))
            return
        if mode == "html":
            if cnt == 0 and self.show_header:
                out.write("<TR>")
                for c in names:
                    out.write(b"<TH>" + html_escape(cstr(c)) + b"</TH>\n")
                out.write("</TR>\n")
            out.write("<TR>")
            for v in row:
                t = to_text(v)
                out.write(b"<TD>" + html_escape(t if t is not None else cstr(null)) + b"</TD>\n")
            out.write("</TR>\n")
            return
        if mode == "tcl":
            if cnt == 0 and self.show_header:
                out.write(enc(self.col_sep).join(c_string(cstr(c)) for c in names) + enc(self.row_sep))
            out.write(enc(self.col_sep).join(c_string(t if t is not None else cstr(null))
                                             for t in (to_text(v) for v in row)) + enc(self.row_sep))
            return
        if mode == "csv":
            if cnt == 0 and self.show_header:
                out.write(enc(self.col_sep).join(self.csv_field(cstr(c)) for c in names) + enc(self.row_sep))
            if n > 0:
                out.write(enc(self.col_sep).join(self.csv_field(to_text(v)) for v in row) + enc(self.row_sep))
            return
        if mode == "insert":
            parts = [b"INSERT INTO " + enc(self.dest_table)]
            if self.show_header:
                parts.append(b"(" + b",".join(enc(quote_ident(c)) if quote_char(c) else cstr(c) for c in names) + b")")
            vals = []
            for v in row:
                vals.append(self.sql_literal(v, escape_nl="newlines" not in self.dump_flags))
            out.write(b"".join(parts) + b" VALUES(" + b",".join(vals) + b");\n")
            return
        if mode == "json":
            out.write("[{" if cnt == 0 else ",\n{")
            items = []
            for i in range(n):
                v = row[i]
                if v is None:
                    js = b"null"
                elif isinstance(v, float):
                    js = b"1e999" if v == float("inf") else b"-1e999" if v == float("-inf") else real_quoted(v).encode()
                elif isinstance(v, bytes):
                    js = json_string(v)
                elif isinstance(v, str):
                    js = json_string(to_text(v))
                else:
                    js = str(v).encode()
                items.append(json_string(cstr(names[i])) + b":" + js)
            out.write(b",".join(items) + b"}")
            return
        if mode == "quote":
            if cnt == 0 and self.show_header:
                out.write(enc(self.col_sep).join(quoted_string(cstr(c)) for c in names) + enc(self.row_sep))
            vals = []
            for v in row:
                if v is None:
                    vals.append(b"NULL")
                elif isinstance(v, str):
                    vals.append(quoted_string(to_text(v)))
                elif isinstance(v, float):
                    vals.append(real_quoted(v).encode())
                elif isinstance(v, bytes):
                    vals.append(b"X'" + v.hex().encode() + b"'")
                else:
                    vals.append(str(v).encode())
            out.write(enc(self.col_sep).join(vals) + enc(self.row_sep))
            return
        if mode == "ascii":
            if cnt == 0 and self.show_header:
                out.write(enc(self.col_sep).join(cstr(c) for c in names) + enc(self.row_sep))
            out.write(enc(self.col_sep).join(t if t is not None else cstr(null)
                                             for t in (to_text(v) for v in row)) + enc(self.row_sep))
            return
        if mode == "semi":
            out.write(schema_line(row[0], ";\n"))
            return

    def sql_literal(self, v, escape_nl=True):
        if v is None:
            return b"NULL"
        if isinstance(v, str):
            t = to_text(v)
            return quoted_escaped_string(t) if escape_nl else quoted_string(t)
        if isinstance(v, bytes):
            return b"X'" + v.hex().encode() + b"'"
        if isinstance(v, float):
            if v == float("inf"):
                return b"1e999"
            if v == float("-inf"):
                return b"-1e999"
            if v == v and -9.3e18 < v < 9.3e18 and v == float(int(v)):
                ir = int(v)
                if -(1 << 63) <= ir < (1 << 63):
                    return b"%d.0" % ir
            return real_quoted(v).encode()
        return str(v).encode()

    def csv_field(self, b):
        if b is None:
            return cstr(self.null)
        sep = enc(self.col_sep)
        need = any(CSV_QUOTE[x] for x in b)
        if need or not b or (sep and sep in b):
            return b'"' + b.replace(b'"', b'""') + b'"'
        return b

    def output_columnar(self, names, cur):
        first = cur.fetchone()
        if first is None:
            return
        ncol = len(names)
        if ncol > len(self.widths):
            self.widths = self.widths + [0] * (ncol - len(self.widths))
        colw = self.widths
        actual = [abs(colw[i]) for i in range(ncol)]
        bw = self.wordwrap

        def wx(i):
            w = colw[i]
            if w == 0:
                w = self.wrap
            return abs(w)

        data = []
        for i in range(ncol):
            line, _ = translate_for_display(cstr(names[i]), wx(i), bw)
            data.append(line)
        rowdiv = []
        multi = False
        row = first
        while row is not None:
            nexts = [None] * ncol
            vals = []
            for i in range(ncol):
                if self.cm_quote:
                    vals.append(self.quoted_column(row[i]))
                else:
                    t = to_text(row[i])
                    vals.append(t if t is not None else cstr(self.null))
            pending = True
            first_line = True
            while pending:
                pending = False
                rowdiv.append(True)
                for i in range(ncol):
                    src = vals[i] if first_line else (nexts[i] if nexts[i] is not None else b"")
                    line, tail = translate_for_display(src, wx(i), bw)
                    data.append(line)
                    nexts[i] = tail
                    if tail is not None:
                        pending = True
                        rowdiv[-1] = False
                        multi = True
                first_line = False
            row = cur.fetchone()
        ntotal = len(data)
        for k in range(ntotal):
            n = strlen_char(data[k])
            j = k % ncol
            if n > actual[j]:
                actual[j] = n
        out = self.out
        mode = self.mode
        B = {k: v.encode() for k, v in BOX.items()}

        def dashes(n):
            return b"-" * n

        def row_sep_line(sep):
            return sep + sep.join(dashes(actual[i] + 2) for i in range(ncol)) + sep + b"\n"

        def box_sep(a, b, c):
            return a + b.join(B["24"] * (actual[i] + 2) for i in range(ncol)) + c + b"\n"

        def centered(i):
            w = actual[i]
            z = data[i]
            n = strlen_char(z)
            return b" " * ((w - n) // 2) + z + b" " * ((w - n + 1) // 2)

        if mode == "column":
            col_sep, row_sep = b"  ", b"\n"
            if self.show_header:
                hdr = []
                for i in range(ncol):
                    w = actual[i]
                    if colw[i] < 0:
                        w = -w
                    hdr.append(width_print(w, data[i]))
                out.write(b"  ".join(hdr) + b"\n")
                out.write(b"  ".join(dashes(actual[i]) for i in range(ncol)) + b"\n")
        elif mode == "table":
            col_sep, row_sep = b" | ", b" |\n"
            out.write(row_sep_line(b"+"))
            out.write(b"| " + b" | ".join(centered(i) for i in range(ncol)) + b" |\n")
            out.write(row_sep_line(b"+"))
        elif mode == "markdown":
            col_sep, row_sep = b" | ", b" |\n"
            out.write(b"| " + b" | ".join(centered(i) for i in range(ncol)) + b" |\n")
            out.write(row_sep_line(b"|"))
        else:
            col_sep, row_sep = b" " + B["13"] + b" ", b" " + B["13"] + b"\n"
            out.write(box_sep(B["23"], B["234"], B["34"]))
            out.write(B["13"] + b" " + (b" " + B["13"] + b" ").join(centered(i) for i in range(ncol)) + b" " + B["13"] + b"\n")
            out.write(box_sep(B["123"], B["1234"], B["134"]))
        j = 0
        buf = []
        for k in range(ncol, ntotal):
            if j == 0 and mode != "column":
                buf.append(B["13"] + b" " if mode == "box" else b"| ")
            w = actual[j]
            if colw[j] < 0:
                w = -w
            buf.append(width_print(w, data[k]))
            if j == ncol - 1:
                buf.append(row_sep)
                if multi and rowdiv[k // ncol - 1] and k + 1 < ntotal:
                    if mode == "table":
                        buf.append(row_sep_line(b"+"))
                    elif mode == "box":
                        buf.append(box_sep(B["123"], B["1234"], B["134"]))
                    elif mode == "column":
                        buf.append(b"\n")
                j = 0
                out.write(b"".join(buf))
                buf = []
            else:
                buf.append(col_sep)
                j += 1
        if mode == "table":
            out.write(row_sep_line(b"+"))
        elif mode == "box":
            out.write(box_sep(B["12"], B["124"], B["14"]))

    def quoted_column(self, v):
        if v is None:
            return b"NULL"
        if isinstance(v, float):
            return real_text(v).encode()
        if isinstance(v, int):
            return str(v).encode()
        if isinstance(v, str):
            return quoted_string(to_text(v))
        return b"x'" + v.hex().encode() + b"'"

    # ---- input
    def run_one_sql_line(self, sql, in_file, startline):
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            self.open_db()
            self.exec_sql(sql)
        except SQLError as e:
            m = e.msg
            if m.startswith("in prepare, "):
                kind, tail = "Parse error", m[12:]
            elif m.startswith("stepping, "):
                kind, tail = "Runtime error", m[10:]
            else:
                kind, tail = "Error", m
            if in_file or not self.interactive:
                prefix = "%s near line %d:" % (kind, startline)
            else:
                prefix = "%s:" % kind
            self.out.flush()
            err("%s %s\n" % (prefix, tail))
            return 1
        finally:
            if self.timer:
                # The guest's clocks are coarse: these times are as good
                # as the VM's clock policy lets them be.
                self.out.write("Run Time: real %.3f user %f sys %f\n" % (
                    time.perf_counter() - t0, time.process_time() - c0, 0.0))
        if self.count_changes:
            ch = self.db.execute("select changes(), total_changes()").fetchone()
            self.out.write("changes: %d   total_changes: %d\n" % ch)
        return 0

    def process_input(self, lines, in_file):
        """process_input over an iterator of lines (without newlines)."""
        if self.nesting == 25:
            err("Input nesting limit (25) reached at line %d. Check recursion.\n" % self.lineno)
            return 1
        self.nesting += 1
        self.lineno = 0
        errcnt = 0
        sql = None
        startline = 0
        qss = QuickScan()
        try:
            self.continuing = False
            for line in lines:
                if errcnt and self.bail and (in_file or not self.interactive):
                    break
                self.lineno += 1
                if qss.plain_white() and not qss.wait and command_terminator(line) and (
                        sql is None or sqlite3.complete_statement(sql + ";")):
                    line = ";"
                qss.scan(line)
                if qss.plain_white() and sql is None:
                    self.echo_line(line)
                    qss = QuickScan()
                    continue
                if line[:1] in (".", "#") and sql is None:
                    self.echo_line(line)
                    if line[0] == ".":
                        rc = self.meta_command(line)
                        if rc == 2:
                            return errcnt > 0
                        if rc:
                            errcnt += 1
                    qss = QuickScan()
                    continue
                if sql is None:
                    sql = line.lstrip(" \t\n\v\f\r")
                    startline = self.lineno
                else:
                    sql += "\n" + line
                if sql and qss.semi_term() and sqlite3.complete_statement(sql):
                    self.echo_line(sql)
                    errcnt += self.run_one_sql_line(sql, in_file, startline)
                    sql = None
                    if self.out_count:
                        self.output_reset()
                        self.out_count = 0
                    qss = QuickScan()
                elif sql is not None and qss.plain_white():
                    self.echo_line(sql)
                    sql = None
                    qss = QuickScan()
                if sql == "":
                    sql = None
                self.continuing = sql is not None
            else:
                if sql:
                    self.echo_line(sql)
                    errcnt += self.run_one_sql_line(sql, in_file, startline)
            return errcnt > 0
        finally:
            self.nesting -= 1

    def echo_line(self, s):
        if self.echo:
            self.out.write(s + "\n")

    def output_reset(self):
        if self.out is not self.stdout:
            self.out.close()
        self.out = self.stdout
        self.outfile = ""

    # ---- dot-commands
    def meta_command(self, line):
        args = parse_meta(line)
        if not args:
            return 0
        rc = self.do_meta(args)
        if self.out_count:
            self.out_count -= 1
            if self.out_count == 0:
                self.output_reset()
        return rc

    def do_meta(self, a):
        cmd = a[0]
        n = len(cmd)
        c = cmd[:1]
        nargs = len(a)

        def m(name, minlen=1):
            return n >= minlen and name.startswith(cmd)

        if c == "b" and m("bail", 3):
            if nargs == 2:
                self.bail = bool(boolean_value(a[1]))
                return 0
            err("Usage: .bail on|off\n")
            return 1
        if c == "c" and m("changes", 3):
            if nargs == 2:
                self.count_changes = bool(boolean_value(a[1]))
                return 0
            err("Usage: .changes on|off\n")
            return 1
        if c == "d" and n > 1 and m("databases"):
            self.open_db()
            for _, name, f in self.db.execute("pragma database_list"):
                ro = self.readonly
                self.out.write("%s: %s %s\n" % (name, f or '""', "r/o" if ro else "r/w"))
            return 0
        if c == "d" and m("dump"):
            return self.cmd_dump(a)
        if c == "e" and m("echo"):
            if nargs == 2:
                self.echo = bool(boolean_value(a[1]))
                return 0
            err("Usage: .echo on|off\n")
            return 1
        if c == "e" and m("eqp"):
            if nargs == 2:
                v = a[1]
                self.eqp = {"full": 2, "trigger": 1}.get(v, None)
                if self.eqp is None:
                    self.eqp = 1 if boolean_value(v) else 0
                return 0
            err("Usage: .eqp off|on|trigger|full\n")
            return 1
        if c == "e" and m("explain"):
            return 0
        if c == "e" and m("exit"):
            if nargs > 1:
                rc = c_int(integer_value(a[1]))
                if rc != 0:
                    raise Exit(rc & 0xFF)
            return 2
        if c == "h" and m("headers"):
            if nargs == 2:
                self.show_header = bool(boolean_value(a[1]))
                self.header_set = True
                return 0
            err("Usage: .headers on|off\n")
            return 1
        if c == "i" and m("import"):
            return self.cmd_import(a)
        if c == "m" and m("mode"):
            return self.cmd_mode(a)
        if c == "n" and m("nullvalue"):
            if nargs == 2:
                self.null = a[1][:19]
                return 0
            err("Usage: .nullvalue STRING\n")
            return 1
        if c == "o" and m("open") and n >= 2:
            return self.cmd_open(a)
        if c == "o" and (m("output") or m("once")):
            return self.cmd_output(a, m("once") and not m("output"))
        if c == "p" and m("print", 3):
            self.out.write(" ".join(a[1:]) + "\n")
            return 0
        if c == "q" and m("quit"):
            return 2
        if c == "r" and m("read", 3):
            if nargs != 2:
                err("Usage: .read FILE\n")
                return 1
            try:
                with open(a[1], "rb") as f:
                    data = f.read()
            except OSError:
                err('Error: cannot open "%s"\n' % a[1])
                return 1
            saved = self.lineno
            rc = self.process_input(split_lines(data), True)
            self.lineno = saved
            return rc
        if c == "s" and m("schema"):
            return self.cmd_schema(a)
        if c == "s" and m("separator"):
            rc = 0
            if nargs < 2 or nargs > 3:
                err("Usage: .separator COL ?ROW?\n")
                rc = 1
            if nargs >= 2:
                self.col_sep = a[1][:19]
            if nargs >= 3:
                self.row_sep = a[2][:19]
            return rc
        if c == "s" and m("show"):
            return self.cmd_show(nargs)
        if (c == "t" and n > 1 and m("tables")) or (c == "i" and (m("indices") or m("indexes"))):
            return self.cmd_tables(a, c)
        if c == "t" and m("timer", 5):
            if nargs == 2:
                self.timer = bool(boolean_value(a[1]))
                return 0
            err("Usage: .timer on|off\n")
            return 1
        if c == "v" and m("version"):
            self.out.write("SQLite %s %s\n" % (sqlite3.sqlite_version, source_id(self)))
            self.out.write("clang-16.0.0\n")
            return 0
        if c == "w" and m("width"):
            self.widths = [c_int(integer_value(x)) for x in a[1:]]
            return 0
        err('Error: unknown command or invalid arguments:  "%s". Enter ".help" for help\n' % cmd)
        return 1

    def cmd_mode(self, a):
        mode = None
        tab = None
        wrap, ww, quote = 60, False, False
        i = 1
        while i < len(a):
            z = a[i]
            if option_match(z, "wrap") and i + 1 < len(a):
                i += 1
                wrap = c_int(integer_value(a[i]))
            elif option_match(z, "ww"):
                ww = True
            elif option_match(z, "wordwrap") and i + 1 < len(a):
                i += 1
                ww = bool(boolean_value(a[i]))
            elif option_match(z, "quote"):
                quote = True
            elif option_match(z, "noquote"):
                quote = False
            elif mode is None:
                mode = z
                if z == "qbox":
                    mode = "box"
                    wrap, ww, quote = 60, False, True
            elif tab is None:
                tab = z
            elif z.startswith("-"):
                err("unknown option: %s\n" % z)
                err("options:\n  --noquote\n  --quote\n  --wordwrap on/off\n  --wrap N\n  --ww\n")
                return 1
            else:
                err('extra argument: "%s"\n' % z)
                return 1
            i += 1
        if mode is None:
            if self.mode in ("column", "markdown", "table", "box"):
                self.out.write("current output mode: %s --wrap %d --wordwrap %s --%squote\n" % (
                    self.mode, self.wrap, "on" if self.wordwrap else "off", "" if self.cm_quote else "no"))
            else:
                self.out.write("current output mode: %s\n" % self.mode)
            mode = self.mode

        def pre(full):
            return full.startswith(mode)

        if pre("lines"):
            self.mode = "line"
            self.row_sep = "\n"
        elif pre("columns"):
            self.mode = "column"
            if not self.header_set:
                self.show_header = True
            self.row_sep = "\n"
            self.wrap, self.wordwrap, self.cm_quote = wrap, ww, quote
        elif pre("list"):
            self.mode = "list"
            self.col_sep, self.row_sep = "|", "\n"
        elif pre("html"):
            self.mode = "html"
        elif pre("tcl"):
            self.mode = "tcl"
            self.col_sep, self.row_sep = " ", "\n"
        elif pre("csv"):
            self.mode = "csv"
            self.col_sep, self.row_sep = ",", "\r\n"
        elif pre("tabs"):
            self.mode = "list"
            self.col_sep = "\t"
        elif pre("insert"):
            self.mode = "insert"
            self.set_table_name(tab if tab is not None else "table")
        elif pre("quote"):
            self.mode = "quote"
            self.col_sep, self.row_sep = ",", "\n"
        elif pre("ascii"):
            self.mode = "ascii"
            self.col_sep, self.row_sep = "\x1f", "\x1e"
        elif pre("markdown"):
            self.mode = "markdown"
            self.wrap, self.wordwrap, self.cm_quote = wrap, ww, quote
        elif pre("table"):
            self.mode = "table"
            self.wrap, self.wordwrap, self.cm_quote = wrap, ww, quote
        elif pre("box"):
            self.mode = "box"
            self.wrap, self.wordwrap, self.cm_quote = wrap, ww, quote
        elif pre("count"):
            self.mode = "count"
        elif pre("off"):
            self.mode = "off"
        elif pre("json"):
            self.mode = "json"
        else:
            err("Error: mode should be one of: ascii box column csv html insert json line list "
                "markdown qbox quote table tabs tcl\n")
            return 1
        return 0

    def set_table_name(self, name):
        q = quote_char(name)
        self.dest_table = quote_ident(name, q) if q else name

    def cmd_output(self, a, once):
        zfile = None
        for i in range(1, len(a)):
            z = a[i]
            if z.startswith("-"):
                zz = z[1:] if z.startswith("--") else z
                if zz == "-bom":
                    continue
                self.out.write('ERROR: unknown option: "%s".  Usage:\n' % z)
                return 1
            elif zfile is None:
                zfile = z
                if zfile.startswith("|"):
                    zfile = " ".join(a[i:])
                    break
            else:
                self.out.write('ERROR: extra parameter: "%s".  Usage:\n' % z)
                return 1
        if zfile is None:
            zfile = "stdout"
        self.out_count = 2 if once else 0
        self.output_reset()
        if zfile.startswith("|"):
            err("Error: pipes are not supported in this OS\n")
            return 1
        if zfile == "stdout":
            return 0
        if zfile == "off":
            try:
                self.out = Out(open("/dev/null", "wb"))
            except OSError:
                pass
            self.outfile = "off"
            return 0
        try:
            f = open(zfile, "wb")
        except OSError:
            err('Error: cannot write to "%s"\n' % zfile)
            return 1
        self.out = Out(f, zfile)
        self.outfile = zfile
        return 0

    def cmd_open(self, *args):
        return extra().cmd_open(self, *args)

    def cmd_show(self, *args):
        return extra().cmd_show(self, *args)

    def cmd_tables(self, *args):
        return extra().cmd_tables(self, *args)

    def cmd_schema_(self, *args):
        return extra().cmd_schema_(self, *args)

    def cmd_schema(self, a):
        try:
            return self.cmd_schema_(a)
        except sqlite3.Error as e:
            err("Error: %s\n" % errmsg(e))
            return 1

    def add_schema(self, *args):
        return extra().add_schema(self, *args)

    def fake_schema(self, *args):
        return extra().fake_schema(self, *args)

    def cmd_dump(self, *args):
        return extra().cmd_dump(self, *args)

    def _exec_quiet(self, *args):
        return extra()._exec_quiet(self, *args)

    def dump_table(self, *args):
        return extra().dump_table(self, *args)

    def table_column_list(self, *args):
        return extra().table_column_list(self, *args)

    def cmd_import(self, *args):
        return extra().cmd_import(self, *args)


_EXTRA = None


def extra():
    """The parts of the shell that most runs do not need (sqlite3extra.py),
    imported on first use: every run compiles its program from source (no
    .pyc can be cached in the read-only support layer), so the common path
    compiles less."""
    global _EXTRA
    if _EXTRA is None:
        import sqlite3extra

        sqlite3extra.bind(globals())
        _EXTRA = sqlite3extra
    return _EXTRA


def dec(b):
    return b.decode("utf-8", "surrogateescape")


def explain_kind(stmt):
    """sqlite3_stmt_isexplain: 1 for EXPLAIN, 2 for EXPLAIN QUERY PLAN."""
    dark = []
    for _, t in tokens(stmt):
        if not is_blank_token(t):
            dark.append(t.lower())
            if len(dark) == 3:
                break
    if not dark or dark[0] != "explain":
        return 0
    return 2 if dark[1:3] == ["query", "plan"] else 1


def errmsg(e):
    return str(e)


def try_prepare(db, stmt):
    """Whether stmt prepares (compiles) in db, without running it, and
    the error message if not: EXPLAIN compiles a statement and only lists
    its program."""
    s = stmt.lstrip(" \t\n\v\f\r")
    if s[:7].lower() == "explain":
        probe = s
    else:
        probe = "EXPLAIN " + s
    try:
        db.execute(probe).fetchone()
        return True, ""
    except sqlite3.Error as e:
        return False, errmsg(e)


def html_escape(b):
    return (b.replace(b"&", b"&amp;").replace(b"<", b"&lt;").replace(b">", b"&gt;")
            .replace(b'"', b"&quot;").replace(b"'", b"&#39;"))


def c_string(b):
    out = bytearray(b'"')
    for c in b:
        if c == 0x5C:
            out += b"\\\\"
        elif c == 0x22:
            out += b'\\"'
        elif c == 9:
            out += b"\\t"
        elif c == 10:
            out += b"\\n"
        elif c == 13:
            out += b"\\r"
        elif c < 0x20 or c >= 0x7F:
            out += b"\\%03o" % c
        else:
            out.append(c)
    out += b'"'
    return bytes(out)


def json_string(b):
    out = bytearray(b'"')
    for c in b:
        if c == 0x5C or c == 0x22:
            out.append(0x5C)
            out.append(c)
        elif c <= 0x1F:
            out.append(0x5C)
            if c == 8:
                out += b"b"
            elif c == 12:
                out += b"f"
            elif c == 10:
                out += b"n"
            elif c == 13:
                out += b"r"
            elif c == 9:
                out += b"t"
            else:
                out += b"u%04x" % c
        else:
            out.append(c)
    out += b'"'
    return bytes(out)


def quoted_string(b):
    return b"'" + b.replace(b"'", b"''") + b"'"


def unused_string(z, a, b):
    if a not in z:
        return a
    if b not in z:
        return b
    i = 0
    while True:
        s = b"(%s%u)" % (a, i)
        i += 1
        if s not in z:
            return s


def quoted_escaped_string(z):
    if b"'" not in z and b"\n" not in z and b"\r" not in z:
        return b"'" + z + b"'"
    if b"\n" not in z and b"\r" not in z:
        return quoted_string(z)
    nl = unused_string(z, b"\\n", b"\\012") if b"\n" in z else None
    cr = unused_string(z, b"\\r", b"\\015") if b"\r" in z else None
    out = bytearray()
    if nl:
        out += b"replace("
    if cr:
        out += b"replace("
    body = z.replace(b"'", b"''")
    if nl:
        body = body.replace(b"\n", nl)
    if cr:
        body = body.replace(b"\r", cr)
    out += b"'" + body + b"'"
    if cr:
        out += b",'" + cr + b"',char(13))"
    if nl:
        out += b",'" + nl + b"',char(10))"
    return bytes(out)


CSV_QUOTE = [1] * 256
for _c in range(0x20, 0x7F):
    CSV_QUOTE[_c] = 0
for _c in (0x20, 0x22, 0x27):
    CSV_QUOTE[_c] = 1
CSV_QUOTE[0x20] = 1


def translate_for_display(z, mx, wordwrap):
    """translateForDisplayAndDup on bytes: the first display line of z
    and the rest (None when there is none)."""
    if z is None:
        return None, None
    if mx < 0:
        mx = -mx
    if mx == 0:
        mx = 1000000
    i = j = n = 0
    L = len(z)

    def at(k):
        return z[k] if k < L else 0

    while n < mx:
        c = at(i)
        if c >= 0x20:
            n += 1
            i += 1
            j += 1
            while (at(i) & 0xC0) == 0x80:
                i += 1
                j += 1
            continue
        if c == 9:
            while True:
                n += 1
                j += 1
                if not ((n & 7) != 0 and n < mx):
                    break
            i += 1
            continue
        break
    if n >= mx and wordwrap:
        k = i
        while k > i // 2:
            if chr(at(k - 1)) in " \t\n\v\f\r":
                break
            k -= 1
        if k <= i // 2:
            k = i
            while k > i // 2:
                a1 = chr(at(k - 1)).isalnum() and at(k - 1) < 0x80
                a2 = chr(at(k)).isalnum() and at(k) < 0x80
                if a1 != a2 and (at(k) & 0xC0) != 0x80:
                    break
                k -= 1
        if k <= i // 2:
            k = i
        else:
            i = k
            while at(i) == 0x20:
                i += 1
    else:
        k = i
    if n >= mx and at(i) >= 0x20:
        tail = z[i:]
    elif at(i) == 13 and at(i + 1) == 10:
        tail = z[i + 2:] if at(i + 2) else None
    elif at(i) == 0 or at(i + 1) == 0:
        tail = None
    else:
        tail = z[i + 1:]
    out = bytearray()
    i = n = 0
    while i < k:
        c = at(i)
        if c >= 0x20:
            n += 1
            out.append(c)
            i += 1
            while (at(i) & 0xC0) == 0x80:
                out.append(at(i))
                i += 1
            continue
        if c == 9:
            while True:
                n += 1
                out.append(0x20)
                if not ((n & 7) != 0 and n < mx):
                    break
            i += 1
            continue
        break
    return bytes(out), tail


def schema_line(z, tail):
    """printSchemaLine."""
    if z is None:
        return b""
    if tail == ";\n" and ("/*" in z or "--" in z):
        for term in ("", "*/", "\n"):
            if sqlite3.complete_statement(z + term + ";"):
                z = z + term
                break
    if z.startswith("CREATE TABLE ") and z[13:14] in ("'", '"'):
        return enc("CREATE TABLE IF NOT EXISTS " + z[13:] + tail)
    return enc(z + tail)


def option_match(z, opt):
    if not z.startswith("-"):
        return False
    z = z[1:]
    if z.startswith("-"):
        z = z[1:]
    return z == opt


def parse_meta(line):
    """do_meta_command's tokenizer: blank-separated words, '...' and
    "..." quoting, backslash escapes resolved outside single quotes."""
    args = []
    h = 1
    n = len(line)
    while h < n and len(args) < 51:
        while h < n and is_space(line[h]):
            h += 1
        if h >= n:
            break
        if line[h] in "'\"":
            delim = line[h]
            h += 1
            s = h
            while h < n and line[h] != delim:
                if line[h] == "\\" and delim == '"' and h + 1 < n:
                    h += 1
                h += 1
            arg = line[s:h]
            if h < n:
                h += 1
            if delim == '"':
                arg = resolve_backslashes(arg)
            args.append(arg)
        else:
            s = h
            while h < n and not is_space(line[h]):
                h += 1
            args.append(resolve_backslashes(line[s:h]))
            if h < n:
                h += 1
    return args


def command_terminator(line):
    z = line.lstrip(" \t\n\v\f\r")
    if z[:1] == "/":
        z = z[1:]
    elif z[:2].lower() == "go":
        z = z[2:]
    else:
        return False
    q = QuickScan()
    q.scan(z)
    return q.plain_white() and not q.semi


def split_lines(data):
    """The lines of an input stream as the shell reads them: split at
    newlines, a trailing CR dropped, decoded losslessly."""
    if not data:
        return
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for ln in lines:
        if ln.endswith(b"\r"):
            ln = ln[:-1]
        i = ln.find(b"\0")
        if i >= 0:
            ln = ln[:i]
        yield dec(ln)


def source_id(sh):
    try:
        db = sqlite3.connect(":memory:")
        return db.execute("select sqlite_source_id()").fetchone()[0]
    except sqlite3.Error:
        return ""


def usage_error(z):
    err("%s: Error: unknown option: %s\n" % (PROG, z))
    err("Use -help for a list of options.\n")
    raise Exit(1)


# The shell of this run, whose output run() flushes at the end.
SHELL = None


def main(argv):
    global SHELL
    sh = SHELL = Shell()
    try:
        sh.interactive = os.isatty(0)
    except OSError:
        sh.interactive = False
    dbname = None
    init_file = None
    cmds = []
    read_stdin = True
    i = 1
    valued = ("-separator", "-nullvalue", "-newline", "-cmd", "-init", "-heap", "-mmap", "-vfs", "-maxsize", "-nonce")
    # First pass: the database, the commands, and the flags that must be
    # known before it is opened.
    while i < len(argv):
        z = argv[i]
        if not z.startswith("-"):
            if dbname is None:
                dbname = z
            else:
                read_stdin = False
                cmds.append(z)
        zz = z[1:] if z.startswith("--") else z
        if zz in valued:
            i += 1
            if i >= len(argv):
                err("%s: Error: missing argument to %s\n" % (PROG, z))
                raise Exit(1)
        elif zz in ("-pagecache", "-lookaside"):
            i += 2
        if zz == "-init":
            init_file = argv[i]
        if zz == "-batch":
            sh.interactive = False
        elif zz == "-readonly":
            sh.readonly = True
        elif zz == "-bail":
            sh.bail = True
        i += 1
    if dbname is not None:
        sh.filename = dbname
    if os.path.exists(sh.filename) if sh.filename not in ("", ":memory:") else False:
        sh.open_db()
    rc = process_sqliterc(sh, init_file)
    if rc:
        return rc
    i = 1
    while i < len(argv):
        z = argv[i]
        if not z.startswith("-"):
            i += 1
            continue
        if z.startswith("--"):
            z = z[1:]
        if z == "-init":
            i += 1
        elif z in ("-html", "-list", "-line", "-column", "-json", "-markdown", "-table", "-box"):
            sh.mode = z[1:]
        elif z == "-quote":
            sh.mode = "quote"
            sh.col_sep, sh.row_sep = ",", "\n"
        elif z == "-csv":
            sh.mode = "csv"
            sh.col_sep = ","
        elif z == "-ascii":
            sh.mode = "ascii"
            sh.col_sep, sh.row_sep = "\x1f", "\x1e"
        elif z == "-tabs":
            sh.mode = "list"
            sh.col_sep, sh.row_sep = "\t", "\n"
        elif z == "-separator":
            i += 1
            sh.col_sep = argv[i][:19]
        elif z == "-newline":
            i += 1
            sh.row_sep = argv[i][:19]
        elif z == "-nullvalue":
            i += 1
            sh.null = argv[i][:19]
        elif z == "-header":
            sh.show_header = True
            sh.header_set = True
        elif z == "-noheader":
            sh.show_header = False
            sh.header_set = True
        elif z == "-echo":
            sh.echo = True
        elif z in ("-readonly", "-bail", "-nofollow", "-safe", "-stats", "-scanstats", "-eqp", "-eqpfull",
                   "-memtrace", "-append", "-deserialize"):
            pass
        elif z == "-version":
            sys.stdout.buffer.write(enc("%s %s\n" % (sqlite3.sqlite_version, source_id(sh))))
            return 0
        elif z == "-interactive":
            sh.interactive = True
        elif z == "-batch":
            sh.interactive = False
        elif z in ("-heap", "-mmap", "-vfs", "-maxsize"):
            i += 1
        elif z in ("-pagecache", "-lookaside", "-nonce"):
            i += 2
        elif z == "-help":
            err("Usage: %s [OPTIONS] FILENAME [SQL]\nFILENAME is the name of an SQLite database. A new database is created\n"
                "if the file does not previously exist.\n" % PROG)
            err(extra().OPTIONS_HELP)
            return 1
        elif z == "-cmd":
            if i == len(argv) - 1:
                break
            i += 1
            c = argv[i]
            if c.startswith("."):
                rc = sh.meta_command(c)
                if rc and sh.bail:
                    return 0 if rc == 2 else rc
            else:
                try:
                    sh.open_db()
                    sh.exec_sql(c)
                except SQLError as e:
                    sh.out.flush()
                    err("Error: %s\n" % e.msg)
                    if sh.bail:
                        return e.rc or 1
        else:
            usage_error(z)
        i += 1
    if not read_stdin:
        for c in cmds:
            if c.startswith("."):
                rc = sh.meta_command(c)
                if rc:
                    return 0 if rc == 2 else rc
            else:
                try:
                    sh.open_db()
                    sh.exec_sql(c)
                except SQLError as e:
                    sh.out.flush()
                    err("Error: %s\n" % e.msg)
                    return e.rc or 1
        return 0
    if sh.interactive:
        sh.stdout.write("SQLite version %s %.19s\nEnter \".help\" for usage hints.\n" % (
            sqlite3.sqlite_version, source_id(sh)))
        if len(argv) == 1:
            sh.stdout.write("Connected to a \033[1mtransient in-memory database\033[0m.\n"
                            "Use \".open FILENAME\" to reopen on a persistent database.\n")
    return sh.process_input(stdin_lines(sh), False)


def process_sqliterc(sh, override):
    """Run -init FILE, or ~/.sqliterc if there is one."""
    path = override
    if path is None:
        home = os.environ.get("HOME", "")
        if not home:
            return 0
        path = home + "/.sqliterc"
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        if override is not None:
            err('cannot open: "%s"\n' % path)
            if sh.bail:
                return 1
        return 0
    if sh.interactive:
        err("-- Loading resources from %s\n" % path)
    saved = sh.lineno
    if sh.process_input(split_lines(data), True) and sh.bail:
        return 1
    sh.lineno = saved
    return 0


def stdin_lines(sh):
    """The lines of standard input, read one at a time as the shell
    needs them (so that a terminal's user sees each answer), with the
    prompts of an interactive session."""
    f = sys.stdin.buffer
    try:
        tty = os.isatty(0)
    except OSError:
        tty = False
    while True:
        sh.out.flush()
        sh.stdout.flush()
        if sh.interactive:
            sh.stdout.write("   ...> " if sh.continuing else "sqlite> ")
            sh.stdout.flush()
        b = f.readline()
        if not b:
            if sh.interactive:
                sh.stdout.write("\n")
            return
        if b.endswith(b"\n"):
            b = b[:-1]
            if b.endswith(b"\r"):
                b = b[:-1]
        i = b.find(b"\0")
        if i >= 0:
            b = b[:i]
        if sh.interactive and not tty:
            # readline echoes what it reads when no terminal does.
            sh.stdout.write(b + b"\n")
        yield dec(b)


def run():
    code = 0
    # /usr/bin/sqlite3 runs "python3 THIS-FILE /usr/bin/sqlite3 ARGS...":
    # the launcher's path stands where the C shell's argv[0] would.
    argv = sys.argv[1:] if len(sys.argv) > 1 else sys.argv[:1]
    try:
        code = main([PROG] + argv[1:])
    except Exit as e:
        code = e.code
    except KeyboardInterrupt:
        code = 130
    if SHELL is not None:
        SHELL.output_reset()
        SHELL.stdout.flush()
    try:
        sys.stdout.flush()
        sys.stdout.buffer.flush()
    except OSError:
        pass
    os._exit(int(code) & 0xFF)


if __name__ == "__main__":
    run()
