# The less used parts of secexec's sqlite3 shell (sqlite3shell.py):
# .dump, .import, .schema, .tables, .show, .open, query plans, the
# position of a prepare error, and REAL formatting near a rounding
# boundary. sqlite3shell.extra() imports this module and binds it to the
# shell's own names; functions taking "self" are methods of its Shell.


def bind(core):
    """Make the shell module's names (its globals: helpers, constants)
    this module's, except those defined here."""
    g = globals()
    for k, v in core.items():
        if not k.startswith("__") and k not in g:
            g[k] = v


# A long double is kept as (m, e), the value m * 2**e with m < 2**64.


def _norm(m, e, sticky=False):
    """Round m * 2**e to 64 significant bits, to nearest even (sticky:
    the exact value is a little above m * 2**e)."""
    bl = m.bit_length()
    if bl <= 64:
        return m, e
    sh = bl - 64
    q = m >> sh
    r = m - (q << sh)
    half = 1 << (sh - 1)
    if r > half or (r == half and (sticky or q & 1)):
        q += 1
        if q.bit_length() > 64:
            q >>= 1
            sh += 1
    return q, e + sh


def _from_float(x):
    n, d = x.as_integer_ratio()
    return _norm(n, -(d.bit_length() - 1))


def _mul(a, b):
    return _norm(a[0] * b[0], a[1] + b[1])


def _add(a, b):
    e = min(a[1], b[1])
    return _norm((a[0] << (a[1] - e)) + (b[0] << (b[1] - e)), e)


def _div(a, b):
    # 66 quotient bits at least, then round with the remainder as sticky.
    k = 66 + b[0].bit_length() - a[0].bit_length()
    k = max(k, 0)
    q, r = divmod(a[0] << k, b[0])
    return _norm(q, a[1] - b[1] - k, sticky=r != 0)


def _cmp(a, b):
    if a[0] == 0 or b[0] == 0:
        return (a[0] > 0) - (b[0] > 0)
    e = min(a[1], b[1])
    x, y = a[0] << (a[1] - e), b[0] << (b[1] - e)
    return (x > y) - (x < y)


_AR_ROUND = [_from_float(v) for v in (5.0e-01, 5.0e-02, 5.0e-03, 5.0e-04, 5.0e-05,
                                      5.0e-06, 5.0e-07, 5.0e-08, 5.0e-09, 5.0e-10)]


_E100, _E10, _TEN, _EM8, _E8, _TENTH, _EM10, _ONE = (
    _from_float(v) for v in (1e100, 1e10, 10.0, 1e-8, 1e8, 0.1, 1e-10, 1.0))


def slow_g(r, precision, altform2, prefix):
    val = _from_float(r)
    if precision > 0:
        precision -= 1
    idx = precision & 0xFFF
    rounder = _AR_ROUND[idx % 10]
    while idx >= 10:
        rounder = _mul(rounder, _EM10)
        idx -= 10
    exp = 0
    if val[0] > 0:
        scale = _ONE
        while _cmp(val, _mul(_E100, scale)) >= 0 and exp <= 350:
            scale = _mul(scale, _E100)
            exp += 100
        while _cmp(val, _mul(_E10, scale)) >= 0 and exp <= 350:
            scale = _mul(scale, _E10)
            exp += 10
        while _cmp(val, _mul(_TEN, scale)) >= 0 and exp <= 350:
            scale = _mul(scale, _TEN)
            exp += 1
        val = _div(val, scale)
        while _cmp(val, _EM8) < 0:
            val = _mul(val, _E8)
            exp -= 8
        while _cmp(val, _ONE) < 0:
            val = _mul(val, _TEN)
            exp -= 1
        if exp > 350:
            return prefix + "Inf"
    val = _add(val, rounder)
    if _cmp(val, _TEN) >= 0:
        val = _mul(val, _TENTH)
        exp += 1
    if exp < -4 or exp > precision:
        xexp = True
    else:
        precision = precision - exp
        xexp = False
    e2 = 0 if xexp else exp
    nsd = 16 + (10 if altform2 else 0)
    # The digit loop on a fixed point number: val = m / 2**-e.
    m, e = val

    def digit():
        nonlocal m, e, nsd
        if nsd <= 0:
            return "0"
        nsd -= 1
        if e >= 0:
            d = m << e
            m = 0
            e = 0
            return chr(48 + d) if d < 10 else "0"
        d = m >> -e
        m = (m - (d << -e)) * 10
        m, e = _norm(m, e)
        return chr(48 + d)

    out = [prefix]
    flag_dp = precision > 0 or altform2
    if e2 < 0:
        out.append("0")
    else:
        while e2 >= 0:
            out.append(digit())
            e2 -= 1
    if flag_dp:
        out.append(".")
    e2 += 1
    while e2 < 0:
        out.append("0")
        precision -= 1
        e2 += 1
    while precision > 0:
        out.append(digit())
        precision -= 1
    s = "".join(out)
    if flag_dp:
        s = s.rstrip("0")
        if s.endswith("."):
            s = s + "0" if altform2 else s[:-1]
    if xexp:
        s += "e-" if exp < 0 else "e+"
        s += "%02d" % abs(exp)
    return s


def output_eqp(self, cur):
    """MODE_EQP: EXPLAIN QUERY PLAN's rows drawn as a tree."""
    rows = [(int(r[0] or 0), int(r[1] or 0), r[3]) for r in cur if r[3] is not None]
    if not rows:
        return
    out = self.out
    if rows[0][2].startswith("-"):
        if len(rows) == 1:
            return
        out.write(rows[0][2][3:] + "\n")
        rows = rows[1:]
    else:
        out.write("QUERY PLAN\n")

    def level(parent, prefix):
        kids = [r for r in rows if r[1] == parent]
        for k, r in enumerate(kids):
            last = k == len(kids) - 1
            out.write("%s%s%s\n" % (prefix, "`--" if last else "|--", r[2]))
            if len(prefix) < 100 - 7:
                level(r[0], prefix + ("   " if last else "|  "))

    level(0, "")


def output_explain(self, names, cur):
    """MODE_Explain: EXPLAIN's program, loops indented."""
    rows = cur.fetchall()
    if not rows:
        return
    if names != ["addr", "opcode", "p1", "p2", "p3", "p4", "p5", "comment"]:
        for k, row in enumerate(rows):
            self.output_row(self.mode, names, row, k)
        return
    indent = [0] * len(rows)
    yields = [False] * len(rows)
    for iop, r in enumerate(rows):
        addr, op, p1, p2 = int(r[0]), r[1], int(r[2] or 0), int(r[3] or 0)
        p2op = p2 + (iop - addr)
        yields[iop] = op in ("Yield", "SeekLT", "SeekGT", "RowSetRead", "Rewind")
        if op in ("Next", "Prev", "VPrev", "VNext", "SorterNext", "Return") and p2op > 0:
            for i in range(p2op, iop):
                indent[i] += 2
        if op == "Goto" and p2op < iop + 1 and ((0 <= p2op and yields[p2op]) or p1):
            for i in range(p2op, iop):
                indent[i] += 2
    widths = [4, 13, 4, 4, 4, 13, 2, 13]
    out = self.out
    out.write(b"  ".join(width_print(widths[i], enc(names[i])) for i in range(8)) + b"\n")
    out.write("  ".join("-" * w for w in widths) + "\n")
    for iop, r in enumerate(rows):
        parts = []
        for i in range(8):
            w = 0 if i == 7 else widths[i]
            v = to_text(r[i])
            if v is None:
                v = cstr(self.null)
            if strlen_char(v) > w:
                w = strlen_char(v)
            pre = b" " * indent[iop] if i == 1 else b""
            parts.append(pre + width_print(w, v))
        out.write(b"  ".join(parts) + b"\n")


def cmd_open(self, a):
    fn = None
    new = False
    readonly = False
    for z in a[1:]:
        if option_match(z, "new"):
            new = True
        elif option_match(z, "readonly"):
            readonly = True
        elif option_match(z, "nofollow") or option_match(z, "append"):
            pass
        elif z.startswith("-"):
            err("unknown option: %s\n" % z)
            return 1
        elif fn is not None:
            err('extra argument: "%s"\n' % z)
            return 1
        else:
            fn = z
    if self.db is not None:
        self.db.close()
        self.db = None
    self.readonly = readonly
    if fn is not None:
        if new:
            try:
                os.unlink(fn)
            except OSError:
                pass
        self.filename = fn
        try:
            self.open_db()
        except Exit:
            err("Error: cannot open '%s'\n" % fn)
            self.db = None
    if self.db is None:
        self.filename = ""
        self.readonly = False
        self.open_db()
    return 0


def cmd_show(self, nargs):
    if nargs != 1:
        err("Usage: .show\n")
        return 1
    o = self.out
    o.write("%12.12s: %s\n" % ("echo", "on" if self.echo else "off"))
    o.write("%12.12s: %s\n" % ("eqp", ["off", "on", "trigger", "full"][self.eqp]))
    o.write("%12.12s: %s\n" % ("explain", "auto"))
    o.write("%12.12s: %s\n" % ("headers", "on" if self.show_header else "off"))
    if self.mode in ("column", "markdown", "table", "box"):
        o.write("%12.12s: %s --wrap %d --wordwrap %s --%squote\n" % (
            "mode", self.mode, self.wrap, "on" if self.wordwrap else "off", "" if self.cm_quote else "no"))
    else:
        o.write("%12.12s: %s\n" % ("mode", self.mode))
    o.write(b"%12.12s: " % b"nullvalue" + c_string(cstr(self.null)) + b"\n")
    o.write("%12.12s: %s\n" % ("output", self.outfile or "stdout"))
    o.write(b"%12.12s: " % b"colseparator" + c_string(cstr(self.col_sep)) + b"\n")
    o.write(b"%12.12s: " % b"rowseparator" + c_string(cstr(self.row_sep)) + b"\n")
    o.write("%12.12s: %s\n" % ("stats", "off"))
    o.write("%12.12s: " % "width" + "".join("%d " % w for w in self.widths) + "\n")
    o.write("%12.12s: %s\n" % ("filename", self.filename))
    return 0


def cmd_tables(self, a, c):
    self.open_db()
    if len(a) > 2 and c == "i":
        err("Usage: .indexes ?LIKE-PATTERN?\n")
        return 1
    parts = []
    for _, name, _f in self.db.execute("PRAGMA database_list"):
        if name is None:
            continue
        if name.lower() == "main":
            s = "SELECT name FROM "
        else:
            s = "SELECT " + sql_quote(name) + "||'.'||name FROM "
        s += quote_ident(name) + ".sqlite_schema "
        if c == "t":
            s += " WHERE type IN ('table','view')   AND name NOT LIKE 'sqlite_%'   AND name LIKE ?1"
        else:
            s += " WHERE type='index'   AND tbl_name LIKE ?1"
        parts.append(s)
    q = " UNION ALL ".join(parts) + " ORDER BY 1"
    pat = a[1] if len(a) > 1 else "%"
    try:
        names = [cstr(r[0]) for r in self.db.execute(q, {"1": pat})]
    except sqlite3.Error as e:
        err("Error: %s\n" % errmsg(e))
        return 1
    if names:
        maxlen = max(len(x) for x in names)
        ncol = max(80 // (maxlen + 2), 1)
        nrow = (len(names) + ncol - 1) // ncol
        for i in range(nrow):
            line = []
            for j in range(i, len(names), nrow):
                sp = b"" if j < nrow else b"  "
                line.append(sp + names[j] + b" " * (maxlen - len(names[j])))
            self.out.write(b"".join(line) + b"\n")
    return 0


def cmd_schema_(self, a):
    self.open_db()
    name = None
    indent = nosys = debug = False
    for z in a[1:]:
        if option_match(z, "indent"):
            indent = True
        elif option_match(z, "debug"):
            debug = True
        elif option_match(z, "nosys"):
            nosys = True
        elif z.startswith("-"):
            err('Unknown option: "%s"\n' % z)
            return 1
        elif name is None:
            name = z
        else:
            err("Usage: .schema ?--indent? ?--nosys? ?LIKE-PATTERN?\n")
            return 1
    emit = (lambda s: self.out.write(pretty_schema(s))) if indent else (lambda s: self.out.write(schema_line(s, ";\n")))
    if name is not None:
        low = name.lower()
        if low in ("sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema"):
            emit("CREATE TABLE %s (\n  type text,\n  name text,\n  tbl_name text,\n  rootpage integer,\n  sql text\n)" % name)
    sel = "SELECT sql, sname, name FROM"
    div = "("
    for i, (_, db, _f) in enumerate(self.db.execute("SELECT * FROM pragma_database_list")):
        sel += div
        div = " UNION ALL "
        sel += "SELECT sql, type, tbl_name, name, rowid,%d AS snum, %s AS sname FROM %s.sqlite_schema" % (
            i + 1, sql_quote(db),
            quote_ident(db) if quote_char(db) else db)
    if name is not None:
        sel += " UNION ALL SELECT shell_module_schema(name), 'table', name, name, name, 9e+99, 'main' FROM pragma_module_list"
    sel += ") WHERE "
    if name is not None:
        glob = any(ch in name for ch in "*?[")
        sel += "lower(printf('%s.%s',sname,tbl_name))" if "." in name else "lower(tbl_name)"
        sel += " GLOB " if glob else " LIKE "
        sel += sql_quote(name)
        if not glob:
            sel += " ESCAPE '\\' "
        sel += " AND "
    if nosys:
        sel += "name NOT LIKE 'sqlite_%%' AND "
    sel += "sql IS NOT NULL ORDER BY snum, rowid"
    if debug:
        self.out.write("SQL: %s;\n" % sel)
        return 0
    self.db.create_function("shell_module_schema", 1, lambda x: None)
    try:
        rows = self.db.execute(sel).fetchall()
        for s, sname, oname in rows:
            emit(self.add_schema(s, None if sname.lower() == "main" else sname, oname))
    except sqlite3.Error as e:
        err("Error: %s\n" % errmsg(e))
        return 1
    return 0


def add_schema(self, sql, schema, name):
    """shellAddSchemaName: the schema name put into a CREATE
    statement of an attached database's object, and a view's columns
    added as a comment."""
    prefixes = ["TABLE", "INDEX", "UNIQUE INDEX", "VIEW", "TRIGGER", "VIRTUAL TABLE"]
    if not isinstance(sql, str) or not sql.startswith("CREATE "):
        return sql
    for p in prefixes:
        n = len(p)
        if sql[7:7 + n] == p and sql[7 + n:8 + n] == " ":
            z = None
            if schema is not None:
                if quote_char(schema) and schema.lower() != "temp":
                    z = '%s "%s".%s' % (sql[:n + 7], schema.replace('"', '""'), sql[n + 8:])
                else:
                    z = "%s %s.%s" % (sql[:n + 7], schema, sql[n + 8:])
            if name is not None and p[0] == "V":
                fake = self.fake_schema(schema, name)
                if fake is not None:
                    z = "%s\n/* %s */" % (z if z is not None else sql, fake)
            if z is not None:
                return z
    return sql


def fake_schema(self, schema, name):
    try:
        cols = self.db.execute('PRAGMA "%s".table_info=%s;' % (
            (schema or "main").replace('"', '""'), sql_quote(name))).fetchall()
    except sqlite3.Error:
        return None
    if not cols:
        return None
    s = ""
    if schema is not None:
        q = quote_char(schema)
        if q and schema.lower() == "temp":
            q = ""
        s += (quote_ident(schema, q) if q else schema) + "."
    q = quote_char(name)
    s += quote_ident(name, q) if q else name
    s += "(" + ",".join(qid(c[1] or "") for c in cols) + ")"
    return s


def cmd_dump(self, a):
    saved_header = self.show_header
    saved_flags = self.dump_flags
    self.dump_flags = set()
    likes = []
    for z in a[1:]:
        if z.startswith("-"):
            zz = z[1:]
            if zz.startswith("-"):
                zz = zz[1:]
            if zz in ("preserve-rowids", "newlines", "data-only", "nosys"):
                self.dump_flags.add(zz)
            else:
                err('Unknown option "%s" on ".dump"\n' % z)
                self.dump_flags = saved_flags
                return 1
        else:
            q = sql_quote(z)
            likes.append("name LIKE %s ESCAPE '\\' OR EXISTS (  SELECT 1 FROM sqlite_schema WHERE "
                         "    name LIKE %s ESCAPE '\\' AND    sql LIKE 'CREATE VIRTUAL TABLE%%' AND"
                         "    substr(o.name, 1, length(name)+1) == (name||'_'))" % (q, q))
    like = " OR ".join(likes) if likes else "true"
    self.open_db()
    data_only = "data-only" in self.dump_flags
    out = self.out
    if not data_only:
        out.write("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n")
    self.writable_schema = False
    self.show_header = False
    # writable_schema makes SQLite read as much of a damaged schema as
    # it can.
    self._exec_quiet("SAVEPOINT dump; PRAGMA writable_schema=ON")
    self.n_err = 0
    try:
        rows = self.db.execute(
            "SELECT name, type, sql FROM sqlite_schema AS o WHERE (%s) AND type=='table'  AND sql NOT NULL"
            " ORDER BY tbl_name='sqlite_sequence', rowid" % like).fetchall()
    except sqlite3.Error:
        rows = []
    for name, typ, sql in rows:
        self.dump_table(name, typ, sql)
    if not data_only:
        try:
            for (sql,) in self.db.execute("SELECT sql FROM sqlite_schema AS o WHERE (%s) AND sql NOT NULL"
                                          "  AND type IN ('index','trigger','view')" % like):
                b = enc(sql)
                i = b.find(b"--")
                out.write(b + (b"\n;\n" if i >= 0 else b";\n"))
        except sqlite3.Error as e:
            rc = (getattr(e, "sqlite_errorcode", 1) or 1) & 0xFF
            out.write("/**** ERROR: (%d) %s *****/\n" % (rc, errmsg(e)))
            if rc != 11:
                self.n_err += 1
    if self.writable_schema:
        out.write("PRAGMA writable_schema=OFF;\n")
        self.writable_schema = False
    self._exec_quiet("PRAGMA writable_schema=OFF;")
    self._exec_quiet("RELEASE dump;")
    if not data_only:
        out.write("ROLLBACK; -- due to errors\n" if self.n_err else "COMMIT;\n")
    self.show_header = saved_header
    self.dump_flags = saved_flags
    return 0


def _exec_quiet(self, sql):
    for s, e in split_statements(sql):
        try:
            self.db.execute(sql[s:e])
        except sqlite3.Error:
            return


def dump_table(self, table, typ, sql):
    out = self.out
    data_only = "data-only" in self.dump_flags
    nosys = "nosys" in self.dump_flags
    if table == "sqlite_sequence" and not nosys:
        if not data_only:
            out.write("DELETE FROM sqlite_sequence;\n")
    elif len(table) == 12 and table.startswith("sqlite_stat") and not nosys:
        if not data_only:
            out.write("ANALYZE sqlite_schema;\n")
    elif table.startswith("sqlite_"):
        return
    elif data_only:
        pass
    elif sql.startswith("CREATE VIRTUAL TABLE"):
        if not self.writable_schema:
            out.write("PRAGMA writable_schema=ON;\n")
            self.writable_schema = True
        out.write("INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql)VALUES('table','%s','%s',0,'%s');\n" % (
            table.replace("'", "''"), table.replace("'", "''"), sql.replace("'", "''")))
        return
    else:
        out.write(schema_line(sql, ";\n"))
    if typ != "table":
        return
    cols = self.table_column_list(table)
    if cols is None:
        self.n_err += 1
        return
    qt = quote_char(table)
    dest = quote_ident(table, qt) if qt else table
    if cols[0]:
        dest += "(" + cols[0] + "," + ",".join(quote_ident(c) if quote_char(c) else c for c in cols[1:]) + ")"
    sel = "SELECT "
    if cols[0]:
        sel += cols[0] + ","
    sel += ",".join(quote_ident(c) if quote_char(c) else c for c in cols[1:])
    sel += " FROM " + (quote_ident(table, qt) if qt else table)
    saved_dest, saved_mode = self.dest_table, self.mode
    self.dest_table = dest
    self.mode = "insert"
    try:
        cur = self.db.execute(sel)
        names = [d[0] for d in cur.description]
        self.show_header = False
        for k, row in enumerate(cur):
            self.output_row("insert", names, row, k)
    except sqlite3.Error:
        self.n_err += 1
    finally:
        self.dest_table, self.mode = saved_dest, saved_mode


def table_column_list(self, table):
    try:
        info = self.db.execute("PRAGMA table_info=%s" % sql_quote(table)).fetchall()
    except sqlite3.Error:
        return None
    if not info:
        return None
    cols = [None] + [r[1] for r in info]
    npk = 0
    ipk = False
    for r in info:
        if r[5]:
            npk += 1
            ipk = npk == 1 and (r[2] or "").lower() == "integer"
    preserve = "preserve-rowids" in self.dump_flags
    if preserve and ipk:
        preserve = self.db.execute("SELECT 1 FROM pragma_index_list(%s) WHERE origin='pk'" % sql_quote(table)).fetchone() is not None
    if preserve:
        for cand in ("rowid", "_rowid_", "oid"):
            if not any(cand.lower() == (c or "").lower() for c in cols[1:]):
                try:
                    self.db.execute("SELECT %s FROM %s LIMIT 0" % (cand, quote_ident(table)))
                    cols[0] = cand
                except sqlite3.Error:
                    pass
                break
    return cols


def cmd_import(self, a):
    zfile = ztable = zschema = None
    verbose = 0
    nskip = 0
    use_mode = True
    ascii_read = self.mode == "ascii"
    csep = rsep = None
    i = 1
    while i < len(a):
        z = a[i]
        if z.startswith("--"):
            z = z[1:]
        if not z.startswith("-"):
            if zfile is None:
                zfile = z
            elif ztable is None:
                ztable = z
            else:
                self.out.write('ERROR: extra argument: "%s".  Usage:\n' % z)
                self.out.write(IMPORT_HELP)
                return 1
        elif z == "-v":
            verbose += 1
        elif z == "-schema" and i < len(a) - 1:
            i += 1
            zschema = a[i]
        elif z == "-skip" and i < len(a) - 1:
            i += 1
            nskip = integer_value(a[i])
        elif z == "-ascii":
            csep, rsep = "\x1f", "\x1e"
            ascii_read = True
            use_mode = False
        elif z == "-csv":
            csep, rsep = ",", "\n"
            ascii_read = False
            use_mode = False
        else:
            self.out.write('ERROR: unknown option: "%s".  Usage:\n' % z)
            self.out.write(IMPORT_HELP)
            return 1
        i += 1
    if ztable is None:
        self.out.write("ERROR: missing %s argument. Usage:\n" % ("FILE" if zfile is None else "TABLE"))
        self.out.write(IMPORT_HELP)
        return 1
    self.open_db()
    if use_mode:
        if len(enc(self.col_sep)) == 0:
            err("Error: non-null column separator required for import\n")
            return 1
        if len(enc(self.col_sep)) > 1:
            err("Error: multi-character column separators not allowed for import\n")
            return 1
        if len(enc(self.row_sep)) == 0:
            err("Error: non-null row separator required for import\n")
            return 1
        if self.mode == "csv" and self.row_sep == "\r\n":
            self.row_sep = "\n"
        if len(enc(self.row_sep)) > 1:
            err("Error: multi-character row separators not allowed for import\n")
            return 1
        csep, rsep = self.col_sep, self.row_sep
    if zfile.startswith("|"):
        err("Error: pipes are not supported in this OS\n")
        return 1
    try:
        with open(zfile, "rb") as f:
            data = f.read()
    except OSError:
        err('Error: cannot open "%s"\n' % zfile)
        return 1
    rd = ImportReader(data, enc(csep)[0], enc(rsep)[0], zfile, ascii_read)
    if verbose >= 2 or (verbose >= 1 and use_mode):
        self.out.write(b"Column separator " + c_string(enc(csep)) + b", row separator " + c_string(enc(rsep)) + b"\n")
    while nskip > 0:
        nskip -= 1
        while rd.read() is not None and rd.term == rd.csep:
            pass
    full = (quote_ident(zschema) + "." if zschema is not None else "") + quote_ident(ztable)
    sel = "SELECT * FROM " + full
    ok, msg = try_prepare(self.db, sel)
    if not ok and msg.startswith("no such table: "):
        names = []
        while True:
            z = rd.read()
            if z is None:
                break
            names.append(z)
            if rd.term != rd.csep:
                break
        if not names:
            err("%s: empty file\n" % zfile)
            return 1
        spec, renames = auto_columns([dec(x) for x in names])
        if renames:
            err("Columns renamed during .import %s due to duplicates:\n%s\n" % (zfile, renames))
        create = "CREATE TABLE " + full + spec + "\n"
        if verbose >= 1:
            self.out.write(create + "\n")
        try:
            self.db.execute(create)
        except sqlite3.Error as e:
            err("%s failed:\n%s\n" % (create, errmsg(e)))
            return 1
        ok, msg = try_prepare(self.db, sel)
    if not ok:
        err("Error: %s\n" % msg)
        return 1
    ncol = len(self.db.execute(sel + " LIMIT 0").description or [])
    if ncol == 0:
        return 0
    ins = "INSERT INTO %s VALUES(%s)" % (full, ",".join("?" * ncol))
    if verbose >= 2:
        self.out.write("Insert using: %s\n" % ins)
    need_commit = not self.db.in_transaction
    if need_commit:
        self.db.execute("BEGIN")
    nrow = nerr = 0
    # The C shell's status is that of the last row's insert.
    last_rc = 0
    while True:
        start = rd.line
        vals = []
        i = 0
        while i < ncol:
            z = rd.read()
            if z is None and i == 0:
                break
            if ascii_read and (z is None or z == b"") and i == 0 and self.mode == "ascii":
                break
            vals.append(None if z is None else dec(z))
            if i < ncol - 1 and rd.term != rd.csep:
                err("%s:%d: expected %d columns but found %d - filling the rest with NULL\n" % (zfile, start, ncol, i + 1))
                vals += [None] * (ncol - len(vals))
                i += 2
                break
            i += 1
        if i > ncol:
            i = ncol + 1
        if rd.term == rd.csep:
            while True:
                rd.read()
                i += 1
                if rd.term != rd.csep:
                    break
            err("%s:%d: expected %d columns but found %d - extras ignored\n" % (zfile, start, ncol, i))
        if i >= ncol:
            vals = vals[:ncol] + [None] * (ncol - len(vals))
            try:
                self.db.execute(ins, vals)
                nrow += 1
                last_rc = 0
            except sqlite3.Error as e:
                err("%s:%d: INSERT failed: %s\n" % (zfile, start, errmsg(e)))
                nerr += 1
                last_rc = (getattr(e, "sqlite_errorcode", 1) or 1) & 0xFF
        if rd.term is None:
            break
    if need_commit:
        self.db.execute("COMMIT")
    if verbose > 0:
        self.out.write("Added %d rows with %d errors using %d lines of input\n" % (nrow, nerr, rd.line - 1))
    return last_rc


IMPORT_HELP = """.import FILE TABLE       Import data from FILE into TABLE
   Options:
     --ascii               Use \\037 and \\036 as column and row separators
     --csv                 Use , and \\n as column and row separators
     --skip N              Skip the first N rows of input
     --schema S            Target table to be S.TABLE
     -v                    "Verbose" - increase auxiliary output
   Notes:
     *  If TABLE does not exist, it is created.  The first row of input
        determines the column names.
     *  If neither --csv or --ascii are used, the input mode is derived
        from the ".mode" output mode
     *  If FILE begins with "|" then it is a command that generates the
        input text.
"""


# The option list of Debian's sqlite3 -help.
OPTIONS_HELP = """OPTIONS include:
   -A ARGS...           run ".archive ARGS" and exit
   -append              append the database to the end of the file
   -ascii               set output mode to 'ascii'
   -bail                stop after hitting an error
   -batch               force batch I/O
   -box                 set output mode to 'box'
   -column              set output mode to 'column'
   -cmd COMMAND         run "COMMAND" before reading stdin
   -csv                 set output mode to 'csv'
   -deserialize         open the database using sqlite3_deserialize()
   -echo                print inputs before execution
   -init FILENAME       read/process named file
   -[no]header          turn headers on or off
   -help                show this message
   -html                set output mode to HTML
   -interactive         force interactive I/O
   -json                set output mode to 'json'
   -line                set output mode to 'line'
   -list                set output mode to 'list'
   -lookaside SIZE N    use N entries of SZ bytes for lookaside memory
   -markdown            set output mode to 'markdown'
   -maxsize N           maximum size for a --deserialize database
   -memtrace            trace all memory allocations and deallocations
   -mmap N              default mmap size set to N
   -newline SEP         set output row separator. Default: '\\n'
   -nofollow            refuse to open symbolic links to database files
   -nonce STRING        set the safe-mode escape nonce
   -nullvalue TEXT      set text string for NULL values. Default ''
   -pagecache SIZE N    use N slots of SZ bytes each for page cache memory
   -quote               set output mode to 'quote'
   -readonly            open the database read-only
   -safe                enable safe-mode
   -separator SEP       set output column separator. Default: '|'
   -stats               print memory stats before each finalize
   -table               set output mode to 'table'
   -tabs                set output mode to 'tabs'
   -version             show SQLite version
   -vfs NAME            use NAME as the default VFS
   -zip                 open the file as a ZIP Archive
"""


class ImportReader:
    """csv_read_one_field / ascii_read_one_field over a file's bytes."""

    def __init__(self, data, csep, rsep, name, ascii_mode):
        self.d = data
        self.p = 0
        self.csep = csep
        self.rsep = rsep
        self.name = name
        self.line = 1
        self.term = 0
        self.not_first = False
        self.ascii = ascii_mode

    def getc(self):
        if self.p >= len(self.d):
            return None
        c = self.d[self.p]
        self.p += 1
        return c

    def read(self):
        if self.ascii:
            return self.read_ascii()
        return self.read_csv()

    def read_ascii(self):
        z = bytearray()
        c = self.getc()
        if c is None:
            self.term = None
            return None
        while c is not None and c != self.csep and c != self.rsep:
            z.append(c)
            c = self.getc()
        if c == self.rsep:
            self.line += 1
        self.term = c
        return bytes(z)

    def read_csv(self):
        z = bytearray()
        c = self.getc()
        if c is None:
            self.term = None
            return None
        if c == 0x22:
            pc = ppc = 0
            start = self.line
            while True:
                c = self.getc()
                if c == self.rsep:
                    self.line += 1
                if c == 0x22 and pc == 0x22:
                    pc = 0
                    continue
                if ((c == self.csep and pc == 0x22) or (c == self.rsep and pc == 0x22)
                        or (c == self.rsep and pc == 0x0D and ppc == 0x22) or (c is None and pc == 0x22)):
                    k = len(z) - 1
                    while z[k] != 0x22:
                        k -= 1
                    del z[k:]
                    self.term = c
                    break
                if pc == 0x22 and c != 0x0D:
                    err('%s:%d: unescaped " character\n' % (self.name, self.line))
                if c is None:
                    err('%s:%d: unterminated "-quoted field\n' % (self.name, start))
                    self.term = c
                    break
                z.append(c)
                ppc = pc
                pc = c
        else:
            if c == 0xEF and not self.not_first:
                z.append(c)
                c = self.getc()
                if c == 0xBB:
                    z.append(c)
                    c = self.getc()
                    if c == 0xBF:
                        self.not_first = True
                        return self.read_csv()
            while c is not None and c != self.csep and c != self.rsep:
                z.append(c)
                c = self.getc()
            if c == self.rsep:
                self.line += 1
                if z and z[-1] == 0x0D:
                    del z[-1]
            self.term = c
        self.not_first = True
        return bytes(z)


def auto_columns(names):
    """zAutoColumn: the column list of a table made by .import, with
    duplicate names made unique, and the renames done."""
    names = [n if n else "?" for n in names]
    lower = [n.lower() for n in names]
    dup = [lower.count(x) > 1 for x in lower]
    renames = None
    final = list(names)
    if any(dup):
        ndig = len(str(len(names)))
        nlz = 0
        while True:
            cand = []
            for i, n in enumerate(names):
                cand.append((n + "_" + "0" * nlz + ("%0*d" % (ndig, i + 1))[-max(ndig, len(str(i + 1))):]).lower()
                            if dup[i] else n.lower())
            if len(set(cand)) == len(cand) or nlz > 10:
                break
            nlz += 1
        final = [n + "_" + "0" * nlz + str(i + 1) if dup[i] else n for i, n in enumerate(names)]
        renames = ",\n".join('"%s" to "%s"' % (names[i].replace('"', '""'), final[i].replace('"', '""'))
                             for i in range(len(names)) if dup[i])
    parts = []
    for i, n in enumerate(final):
        col = '"' + n.replace('"', '""') + '" TEXT'
        if i == 0:
            parts.append(col)
        else:
            parts.append(("," + (" " if i % 4 > 0 else "\n ")) + col)
    return "(\n" + "".join(parts) + ")", renames


def error_context(db, rest, stmt, msg):
    """The "error here" lines of shell_error_context, for a prepare error
    of the first statement of rest."""
    off = error_offset(db, stmt, msg)
    if off is None or off < 0:
        return ""
    z = enc(rest)
    # stmt starts rest (both stripped of leading space).
    o = len(enc(stmt[:off]))
    i = 0
    while o > 50:
        o -= 1
        i += 1
        while i < len(z) and (z[i] & 0xC0) == 0x80:
            i += 1
            o -= 1
    z = z[i:]
    ln = len(z)
    if ln > 78:
        ln = 78
        while (z[ln] & 0xC0) == 0x80:
            ln -= 1
    code = bytearray(z[:ln])
    for k in range(len(code)):
        if chr(z[k]) in " \t\n\v\f\r":
            code[k] = 0x20
    code = dec(bytes(code))
    if o < 25:
        return "\n  %s\n  %s^--- error here" % (code, " " * o)
    return "\n  %s\n  %serror here ---^" % (code, " " * (o - 14))


def error_offset(db, stmt, msg):
    """Where in stmt the error msg is, as sqlite3_error_offset would say:
    the statement is compiled cut after each of its tokens until the cut
    gives the same error; the error then lies in the last token, or in a
    name the message quotes."""
    stmt = stmt.lstrip(" \t\n\v\f\r")
    # Imported here: only an error pays for it.
    import re
    toks = tokens(stmt)
    named = None
    mm = re.match(r'near "(.*)": syntax error$', msg, re.S) or re.match(r'unrecognized token: "(.*)"$', msg, re.S)
    if mm:
        named = mm.group(1)
    else:
        for pat in (r"no such column: (.*)$", r"table (\S+) already exists$", r"index (\S+) already exists$",
                    r"view (\S+) already exists$", r"wrong number of arguments to function (\w+)\(\)$",
                    r"no such function: (\w+)$", r"misuse of aggregate function (\w+)\(\)$",
                    r"misuse of aggregate: (\w+)\(\)$", r"ambiguous column name: (.*)$",
                    r"misuse of window function (\w+)\(\)$", r"unknown function: (\w+)\(\)$"):
            mm = re.match(pat, msg, re.S)
            if mm:
                named = mm.group(1)
                break
        if named is None:
            return None
    if len(toks) > 400:
        return None
    first = next((t for _, t in toks if not is_blank_token(t)), "")
    if first.lower() == "pragma":
        # Some pragmas act while they are compiled: a prefix compiled
        # here could change a setting the statement never reached. A
        # syntax error does not depend on the database, so a scratch one
        # is probed instead.
        if not (msg.startswith("near ") or msg.startswith("unrecognized token")):
            return None
        db = sqlite3.connect(":memory:")
    for k in range(1, len(toks) + 1):
        start, t = toks[k - 1]
        if is_blank_token(t):
            continue
        prefix = stmt[:start + len(t)]
        ok, m2 = try_prepare(db, prefix)
        if ok or m2 != msg:
            continue
        if mm and (msg.startswith("near ") or msg.startswith("unrecognized token")):
            return start
        last = named.split(".")[-1]
        if msg.startswith("no such column: ") and stmt[:6].lower() == "update":
            # UPDATE ... SET's unknown columns are reported by name only.
            dark = [t2 for _, t2 in toks if not is_blank_token(t2)]
            low = [t2.lower() for t2 in dark]
            if "set" in low:
                i2 = low.index("set") + 1
                depth = 0
                while i2 < len(dark):
                    if dark[i2] == "(":
                        depth += 1
                    elif dark[i2] == ")":
                        depth -= 1
                    elif depth == 0 and low[i2] in ("where", "from", "returning", "order", "limit", ";"):
                        break
                    elif (depth == 0 and dark[i2].strip('"`[]').lower() == last.lower()
                          and i2 + 1 < len(dark) and dark[i2 + 1] == "="):
                        return None
                    i2 += 1
        for s2, t2 in reversed(toks[:k]):
            tt = t2
            if tt[:1] in "\"'`[" and len(tt) >= 2:
                tt = tt[1:-1]
            if tt.lower() == last.lower():
                if "." in named:
                    # A qualified name starts at its first part.
                    idx = toks.index((s2, t2))
                    parts = named.count(".")
                    idx -= 2 * parts
                    if idx >= 0:
                        return toks[idx][0]
                return s2
        return start
    return None


def pretty_schema(z):
    """MODE_Pretty (.schema --indent)."""
    if z is None:
        return b""
    if z[:11].upper() == "CREATE VIEW" or z[:11].upper() == "CREATE TRIG":
        return enc(z + ";\n")
    out = []
    i = 0
    while i < len(z) and is_space(z[i]):
        i += 1
    for c in z[i:]:
        if is_space(c):
            if out and out[-1] == "\r":
                out[-1] = "\n"
            if out and (is_space(out[-1]) or out[-1] == "("):
                continue
        elif c in "()" and out and is_space(out[-1]):
            out.pop()
        out.append(c)
    while out and is_space(out[-1]):
        out.pop()
    z = "".join(out)
    res = []
    if len(enc(z)) >= 79:
        cur = []
        cend = ""
        nparen = 0
        nline = 0
        i = 0
        while i < len(z):
            c = z[i]
            if cend and c == cend:
                cend = ""
            elif cend:
                pass
            elif c in "\"'`":
                cend = c
            elif c == "[":
                cend = "]"
            elif c == "-" and z[i + 1:i + 2] == "-":
                cend = "\n"
            elif c == "(":
                nparen += 1
            elif c == ")":
                nparen -= 1
                if nline > 0 and nparen == 0 and cur:
                    res.append(schema_line("".join(cur), "\n"))
                    cur = []
            cur.append(c)
            if nparen == 1 and not cend and (c == "(" or c == "\n" or (c == "," and not ws_to_eol(z, i + 1))):
                if c == "\n":
                    cur.pop()
                res.append(schema_line("".join(cur), "\n  "))
                cur = []
                nline += 1
                while i + 1 < len(z) and is_space(z[i + 1]):
                    i += 1
            i += 1
        z = "".join(cur)
    res.append(schema_line(z, ";\n"))
    return b"".join(res)


def ws_to_eol(z, i):
    while i < len(z):
        if z[i] == "\n":
            return True
        if is_space(z[i]):
            i += 1
            continue
        if z[i] == "-" and z[i + 1:i + 2] == "-":
            return True
        return False
    return True
