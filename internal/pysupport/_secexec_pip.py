# secexec's pip: a compact installer of pure-Python wheels with pip's
# command line and output for the common commands (install, uninstall,
# list, show, freeze). Real pip cannot run on this CPython for WASI (see
# docs/python-and-git.md: pip 23.0 fails on 3.12, needs mmap, and takes
# seconds to start); this one is small enough to start fast. It reads
# PEP 503 "simple" indexes over the VM's sockets (socket.py, ssl.py), so
# the VM's net rules apply to every request.
import csv
import io
import json
import os
import re
import sys
import types


class _Lazy:
    """A module imported on first use: CPython for WASI compiles the
    standard library's sources at every start (seconds for urllib's and
    email's), so list, show and freeze do not pay for what only install
    needs."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        import importlib

        return getattr(importlib.import_module(self._name), attr)


base64 = _Lazy("base64")
configparser = _Lazy("configparser")
hashlib = _Lazy("hashlib")
platform = _Lazy("platform")
shutil = _Lazy("shutil")
tempfile = _Lazy("tempfile")
zipfile = _Lazy("zipfile")
urllib = types.SimpleNamespace(error=_Lazy("urllib.error"), parse=_Lazy("urllib.parse"),
                               request=_Lazy("urllib.request"))

VERSION = "1.0+secexec"
PYPI = "https://pypi.org/simple"
PYVER = "%d.%d" % sys.version_info[:2]
# Not removed by uninstall's neighbours and not shown by freeze, as pip.
FREEZE_SKIP = {"pip", "setuptools", "wheel", "distribute"}


class PipError(Exception):
    """A failure reported as pip reports it: "ERROR: ..." and status 1."""


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def err(msg):
    print(msg, file=sys.stderr)


class Headers:
    """The header fields of a METADATA, PKG-INFO or WHEEL file: what
    email.parser gives (get, get_all), without importing email."""

    def __init__(self, text):
        self.fields = []
        for line in text.splitlines():
            if not line.strip():
                break
            if line[:1] in (" ", "\t") and self.fields:
                k, v = self.fields[-1]
                self.fields[-1] = (k, v + "\n" + line)
            elif ":" in line:
                k, v = line.split(":", 1)
                self.fields.append((k.strip(), v.strip()))

    def get(self, name, default=None):
        for k, v in self.fields:
            if k.lower() == name.lower():
                return v
        return default

    def get_all(self, name):
        out = [v for k, v in self.fields if k.lower() == name.lower()]
        return out or None


def parse_headers(data):
    if isinstance(data, bytes):
        data = data.decode("utf-8", "surrogateescape")
    return Headers(data)


# ---- PEP 440 versions and specifiers ----

_VERSION_RE = re.compile(
    r"^\s*v?(?:(?P<epoch>\d+)!)?(?P<release>\d+(?:\.\d+)*)"
    r"(?:[-_.]?(?P<pre_l>alpha|beta|preview|pre|rc|a|b|c)[-_.]?(?P<pre_n>\d+)?)?"
    r"(?:-(?P<post_n1>\d+)|[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>\d+)?)?"
    r"(?:[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>\d+)?)?"
    r"(?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?\s*$", re.I)
_PRE = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}


class Version:
    def __init__(self, s):
        m = _VERSION_RE.match(s)
        if not m:
            raise ValueError("invalid version: %r" % s)
        self.text = s.strip()
        self.epoch = int(m["epoch"] or 0)
        self.release = tuple(int(x) for x in m["release"].split("."))
        self.pre = (_PRE[m["pre_l"].lower()], int(m["pre_n"] or 0)) if m["pre_l"] else None
        post = m["post_n1"] or m["post_n2"]
        self.post = int(post or 0) if (m["post_n1"] or m["post_l"]) else None
        self.dev = int(m["dev_n"] or 0) if m["dev_l"] else None
        self.local = m["local"]
        rel = list(self.release)
        while len(rel) > 1 and rel[-1] == 0:
            rel.pop()
        if self.pre is None and self.post is None and self.dev is not None:
            pre = (0,)
        elif self.pre is None:
            pre = (2,)
        else:
            pre = (1,) + self.pre
        local = (0,) if self.local is None else (1, tuple(
            (1, int(p), "") if p.isdigit() else (0, 0, p) for p in re.split(r"[-_.]", self.local.lower())))
        self.key = (self.epoch, tuple(rel), pre, (0,) if self.post is None else (1, self.post),
                    (2,) if self.dev is None else (1, self.dev), local)
        self.public_key = self.key[:5] + ((0,),)

    @property
    def is_prerelease(self):
        return self.pre is not None or self.dev is not None

    def __str__(self):
        return self.text

    def __eq__(self, o):
        return self.key == o.key

    def __lt__(self, o):
        return self.key < o.key

    def __le__(self, o):
        return self.key <= o.key

    def __hash__(self):
        return hash(self.key)


def parse_version(s):
    try:
        return Version(s)
    except ValueError:
        return None


_SPEC_RE = re.compile(r"\s*(===|==|!=|~=|<=|>=|<|>)\s*([^\s,;]+)\s*")


class Specifier:
    def __init__(self, op, value):
        self.op, self.value = op, value

    def __str__(self):
        return self.op + self.value

    def mentions_prerelease(self):
        v = parse_version(self.value.rstrip(".*").rstrip("."))
        return v is not None and v.is_prerelease

    def contains(self, v):
        op, value = self.op, self.value
        if op == "===":
            return str(v).lower() == value.lower()
        if op in ("==", "!=") and value.endswith(".*"):
            want = parse_version(value[:-2])
            if want is None:
                return False
            n = len(want.release)
            got = v.release + (0,) * max(0, n - len(v.release))
            ok = v.epoch == want.epoch and got[:n] == want.release
            return ok if op == "==" else not ok
        spec = parse_version(value)
        if spec is None:
            return False
        vkey = v.key if spec.local is not None else v.public_key
        if op == "==":
            return vkey == spec.key
        if op == "!=":
            return vkey != spec.key
        if op == ">=":
            return v.public_key >= spec.key
        if op == "<=":
            return v.public_key <= spec.key
        if op == ">":
            if not v.public_key > spec.key:
                return False
            # >1.7 excludes 1.7.post1 unless the specifier is a post-release.
            return spec.post is not None or v.post is None or v.release != spec.release
        if op == "<":
            if not v.public_key < spec.key:
                return False
            return spec.is_prerelease or not v.is_prerelease or \
                Version(".".join(map(str, v.release))).key[:2] != Version(".".join(map(str, spec.release))).key[:2]
        if op == "~=":
            if len(spec.release) < 2:
                return False
            prefix = ".".join(map(str, spec.release[:-1])) + ".*"
            if spec.epoch:
                prefix = "%d!%s" % (spec.epoch, prefix)
            return Specifier(">=", value).contains(v) and Specifier("==", prefix).contains(v)
        return False


def parse_specifiers(text):
    text = text.strip()
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    specs = []
    for part in text.split(","):
        if not part.strip():
            continue
        m = _SPEC_RE.fullmatch(part)
        if not m:
            raise PipError("Invalid requirement: specifier %r" % part.strip())
        specs.append(Specifier(m[1], m[2]))
    return specs


# ---- PEP 508 markers ----

def marker_environment():
    impl = sys.implementation
    iv = impl.version
    impl_version = "%d.%d.%d" % (iv.major, iv.minor, iv.micro)
    if iv.releaselevel != "final":
        impl_version += iv.releaselevel[0] + str(iv.serial)
    return {
        "implementation_name": impl.name,
        "implementation_version": impl_version,
        "os_name": os.name,
        "platform_machine": platform.machine(),
        "platform_release": platform.release(),
        "platform_system": platform.system(),
        "platform_version": platform.version(),
        "python_full_version": platform.python_version(),
        "platform_python_implementation": platform.python_implementation(),
        "python_version": PYVER,
        "sys_platform": sys.platform,
    }


_MARKER_TOKEN = re.compile(r"""\s*(?:(?P<str>'[^']*'|"[^"]*")|(?P<op>===|==|!=|<=|>=|~=|<|>|\(|\))|"""
                           r"""(?P<word>[A-Za-z_][A-Za-z0-9_.]*))""")
_VERSION_VARS = {"python_version", "python_full_version", "implementation_version", "platform_release"}


def evaluate_marker(text, extra=""):
    """Evaluates a PEP 508 marker; a malformed one is an error."""
    toks = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _MARKER_TOKEN.match(text, pos)
        if not m:
            raise PipError("Invalid marker: %r" % text)
        pos = m.end()
        if m["str"] is not None:
            toks.append(("str", m["str"][1:-1]))
        elif m["op"] is not None:
            toks.append(("op", m["op"]))
        else:
            toks.append(("word", m["word"]))
    env = marker_environment()
    env["extra"] = canonical(extra) if extra else ""
    i = 0

    def peek():
        return toks[i] if i < len(toks) else (None, None)

    def value():
        nonlocal i
        kind, v = peek()
        i += 1
        if kind == "str":
            return v, None
        if kind == "word" and v in env:
            return env[v], v
        raise PipError("Invalid marker: %r" % text)

    def comparison():
        nonlocal i
        if peek() == ("op", "("):
            i += 1
            r = disjunction()
            if peek() != ("op", ")"):
                raise PipError("Invalid marker: %r" % text)
            i += 1
            return r
        lhs, lvar = value()
        kind, op = peek()
        if kind == "op" and op not in "()":
            i += 1
        elif (kind, op) == ("word", "in"):
            i += 1
            op = "in"
        elif (kind, op) == ("word", "not") and i + 1 < len(toks) and toks[i + 1] == ("word", "in"):
            i += 2
            op = "not in"
        else:
            raise PipError("Invalid marker: %r" % text)
        rhs, rvar = value()
        if "extra" in (lvar, rvar):
            lhs, rhs = canonical(lhs), canonical(rhs)
        if op == "in":
            return lhs in rhs
        if op == "not in":
            return lhs not in rhs
        lv, rv = parse_version(lhs), parse_version(rhs)
        if lv is not None and rv is not None and op != "===":
            return Specifier(op, rhs).contains(lv)
        if op in ("==", "==="):
            return lhs == rhs
        if op == "!=":
            return lhs != rhs
        raise PipError("Invalid marker: %r cannot be compared with %s" % (text, op))

    def conjunction():
        nonlocal i
        r = comparison()
        while peek() == ("word", "and"):
            i += 1
            r = comparison() and r
        return r

    def disjunction():
        nonlocal i
        r = conjunction()
        while peek() == ("word", "or"):
            i += 1
            r = conjunction() or r
        return r

    result = disjunction()
    if i != len(toks):
        raise PipError("Invalid marker: %r" % text)
    return result


# ---- requirements ----

_REQ_RE = re.compile(r"^\s*(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*"
                     r"(?:\[(?P<extras>[^\]]*)\])?\s*(?P<rest>[^;]*?)\s*(?:;\s*(?P<marker>.*?))?\s*$")


class Requirement:
    def __init__(self, text, parent=None):
        self.text = text.strip()
        self.parent = parent
        self.path = None
        if self.text.endswith(".whl") and ("/" in self.text or os.path.isfile(self.text)):
            self.path = os.path.abspath(self.text)
            wn = parse_wheel_name(os.path.basename(self.text))
            if wn is None:
                raise PipError("Invalid wheel filename: %s" % os.path.basename(self.text))
            self.name, self.extras, self.specs, self.marker = wn[0], set(), [Specifier("==", wn[1])], None
            return
        m = _REQ_RE.match(self.text)
        if not m or m["rest"].startswith("@") or "://" in self.text.split(";")[0]:
            raise PipError("Invalid requirement: '%s'" % self.text)
        self.name = m["name"]
        self.extras = {canonical(e) for e in (m["extras"] or "").split(",") if e.strip()}
        self.specs = parse_specifiers(m["rest"])
        self.marker = m["marker"]

    @property
    def key(self):
        return canonical(self.name)

    def applies(self, extras=("",)):
        if not self.marker:
            return True
        return any(evaluate_marker(self.marker, e) for e in extras)

    def __str__(self):
        s = self.name
        if self.extras:
            s += "[" + ",".join(sorted(self.extras)) + "]"
        return s + ",".join(str(x) for x in self.specs)


def read_requirements(path, options, seen=()):
    """Requirement lines of a requirements file (and files it names with
    -r), applying the index options it carries, as pip does."""
    if path in seen or len(seen) > 20:
        raise PipError("Requirements file %s includes itself" % path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise PipError("Could not open requirements file: %s" % e) from e
    text = re.sub(r"\\\n", "", text)
    out = []
    for line in text.splitlines():
        line = re.sub(r"(^|\s)#.*$", "", line).strip()
        if not line:
            continue
        if line.startswith("-"):
            parts = line.split(None, 1) if " " in line or "\t" in line else line.split("=", 1)
            opt, arg = parts[0], (parts[1].strip() if len(parts) > 1 else "")
            if opt in ("-r", "--requirement", "-c", "--constraint"):
                out += read_requirements(os.path.join(os.path.dirname(path), arg), options, seen + (path,))
            elif opt in ("-i", "--index-url"):
                options.index_url = arg
            elif opt == "--extra-index-url":
                options.extra_index_urls.append(arg)
            elif opt == "--trusted-host":
                options.trusted_hosts.append(arg)
            elif opt == "--no-index":
                options.no_index = True
            elif opt == "--pre":
                options.pre = True
            else:
                raise PipError("Unsupported option in %s: %s" % (path, opt))
            continue
        out.append(line)
    return out


# ---- configuration: files, environment, command line ----

def config_files():
    """pip.conf files in pip's order: global, user, site (later wins);
    PIP_CONFIG_FILE first, os.devnull disables them all."""
    if os.environ.get("PIP_CONFIG_FILE") == os.devnull:
        return []
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    files = ["/etc/xdg/pip/pip.conf", "/etc/pip.conf", os.path.expanduser("~/.pip/pip.conf"),
             os.path.join(xdg, "pip", "pip.conf")]
    if sys.prefix != sys.base_prefix:
        files.append(os.path.join(sys.prefix, "pip.conf"))
    if os.environ.get("PIP_CONFIG_FILE"):
        files.insert(0, os.environ["PIP_CONFIG_FILE"])
    return files


def load_config(command, isolated):
    """The settings of pip.conf files and PIP_* variables, later ones
    winning: files (global, user, site), then the environment."""
    conf = {}
    if isolated:
        return conf
    for path in config_files():
        if not os.path.isfile(path):
            continue
        cp = configparser.RawConfigParser()
        try:
            cp.read(path, encoding="utf-8")
        except (configparser.Error, OSError, UnicodeError) as e:
            raise PipError("Configuration file could not be loaded.\n%s" % e) from e
        for section in ("global", command):
            if cp.has_section(section):
                for k, v in cp.items(section):
                    conf[k.replace("_", "-")] = v
    for k, v in os.environ.items():
        if k.startswith("PIP_") and k not in ("PIP_CONFIG_FILE",):
            conf[k[4:].lower().replace("_", "-")] = v
    return conf


def truthy(v):
    return str(v).strip().lower() in ("1", "yes", "true", "on")


# ---- the index ----

def link_parser(url):
    """An HTML parser that gathers a page's links (html.parser imported
    on first use)."""
    import html.parser

    class LinkParser(html.parser.HTMLParser):
        def __init__(self, url):
            super().__init__()
            self.base = url
            self.links = []

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag == "base" and a.get("href"):
                self.base = urllib.parse.urljoin(self.base, a["href"])
            elif tag == "a" and a.get("href"):
                self.links.append((urllib.parse.urljoin(self.base, a["href"]), a))

    return LinkParser(url)


_WHEEL_RE = re.compile(r"^(?P<name>[^\s-]+?)-(?P<ver>[^\s-]+?)(?:-(?P<build>\d[^-]*))?"
                       r"-(?P<py>[^\s-]+?)-(?P<abi>[^\s-]+?)-(?P<plat>[^\s-]+?)\.whl$")


def parse_wheel_name(filename):
    m = _WHEEL_RE.match(filename)
    if not m:
        return None
    return m["name"], m["ver"], m["py"], m["abi"], m["plat"]


def supported_tags():
    """The wheel tags this interpreter installs, best first: pure Python
    only (no compiled extension can load in CPython for WASI)."""
    major, minor = sys.version_info[:2]
    tags = [("cp%d%d" % (major, minor), "none", "any"), ("py%d%d" % (major, minor), "none", "any"),
            ("py%d" % major, "none", "any")]
    tags += [("py%d%d" % (major, m), "none", "any") for m in range(minor - 1, -1, -1)]
    return tags


def wheel_rank(py, abi, plat):
    tags = supported_tags()
    best = None
    for p in py.split("."):
        for a in abi.split("."):
            for pl in plat.split("."):
                if (p, a, pl) in tags:
                    r = tags.index((p, a, pl))
                    best = r if best is None else min(best, r)
    return best


def redact(url):
    u = urllib.parse.urlsplit(url)
    if u.username or u.password:
        netloc = "****:****@" + u.hostname + (":%d" % u.port if u.port else "") if u.password else \
            u.username + "@" + u.hostname + (":%d" % u.port if u.port else "")
        return urllib.parse.urlunsplit((u.scheme, netloc, u.path, u.query, u.fragment))
    return url


class Session:
    def __init__(self, options):
        self.options = options
        self.trusted = set()
        for t in options.trusted_hosts:
            for h in t.split():
                self.trusted.add(h.lower())

    def is_trusted(self, u):
        host = (u.hostname or "").lower()
        return host in self.trusted or ("%s:%s" % (host, u.port)) in self.trusted

    def secure(self, url):
        u = urllib.parse.urlsplit(url)
        if u.scheme in ("https", "file"):
            return True
        host = (u.hostname or "").lower()
        if host == "localhost" or host == "::1" or host.startswith("127.") or self.is_trusted(u):
            return True
        return False

    def open(self, url, accept=None):
        u = urllib.parse.urlsplit(url)
        headers = {"User-Agent": "pip/%s (secexec)" % VERSION}
        if accept:
            headers["Accept"] = accept
        if u.username is not None:
            cred = "%s:%s" % (urllib.parse.unquote(u.username), urllib.parse.unquote(u.password or ""))
            headers["Authorization"] = "Basic " + base64.b64encode(cred.encode()).decode()
            netloc = u.hostname + (":%d" % u.port if u.port else "")
            url = urllib.parse.urlunsplit((u.scheme, netloc, u.path, u.query, ""))
        ctx = None
        if u.scheme == "https" and self.is_trusted(u):
            import ssl
            ctx = ssl._create_unverified_context()
        req = urllib.request.Request(urllib.parse.urldefrag(url)[0], headers=headers)
        return urllib.request.urlopen(req, timeout=self.options.timeout, context=ctx)

    def fetch_page(self, url):
        """The body of an index page, at most 32 MiB."""
        with self.open(url, "text/html") as r:
            body = r.read(32 << 20)
            charset = r.headers.get_content_charset() or "utf-8"
            return r.geturl(), body.decode(charset, "replace")


class Candidate:
    def __init__(self, name, version, url, filename, rank, requires_python, path=None):
        self.name, self.version, self.url, self.filename = name, version, url, filename
        self.rank, self.requires_python, self.path = rank, requires_python, path


def python_ok(requires_python):
    if not requires_python:
        return True
    try:
        specs = parse_specifiers(requires_python)
    except PipError:
        return True
    v = Version(platform.python_version())
    return all(s.contains(v) for s in specs)


class Finder:
    def __init__(self, session, options):
        self.session = session
        self.options = options
        self.cache = {}
        self.indexes = [] if options.no_index else [options.index_url] + options.extra_index_urls
        self.sdists = {}
        self.unreachable = {}

    def candidates(self, name):
        key = canonical(name)
        if key in self.cache:
            return self.cache[key]
        found = []
        sdists = []
        for index in self.indexes:
            if not self.session.secure(index):
                host = urllib.parse.urlsplit(index).hostname
                err("WARNING: The repository located at %s is not a trusted or secure host and is being ignored. "
                    "If this repository is available via HTTPS we recommend you use HTTPS instead, otherwise you "
                    "may silence this warning and allow it anyway with '--trusted-host %s'." % (host, host))
                continue
            url = index.rstrip("/") + "/" + key + "/"
            try:
                base, page = self.session.fetch_page(url)
            except urllib.error.HTTPError as e:
                if e.code != 404:
                    err("ERROR: HTTP error %d while getting %s" % (e.code, redact(url)))
                    self.unreachable[key] = True
                continue
            except (OSError, ValueError) as e:
                reason = getattr(e, "reason", e)
                err("WARNING: Could not fetch URL %s: connection error: %s - skipping" % (redact(url), reason))
                self.unreachable[key] = True
                continue
            p = link_parser(base)
            p.feed(page)
            for href, attrs in p.links:
                filename = urllib.parse.unquote(urllib.parse.urlsplit(href).path.rsplit("/", 1)[-1])
                # The name becomes a file name in the download directory.
                if "/" in filename or "\0" in filename or filename.startswith("."):
                    continue
                if attrs.get("data-yanked") is not None:
                    continue
                wn = parse_wheel_name(filename)
                if wn is None:
                    m = re.match(r"^(.*)-([^-]+)\.(tar\.gz|zip|tar\.bz2|tgz)$", filename)
                    if m and canonical(m[1]) == key:
                        sdists.append(m[2])
                    continue
                if canonical(wn[0]) != key:
                    continue
                v = parse_version(wn[1])
                if v is None:
                    continue
                rank = wheel_rank(wn[2], wn[3], wn[4])
                if rank is None:
                    continue
                rp = attrs.get("data-requires-python")
                found.append(Candidate(wn[0], v, href, filename, rank, rp))
        self.cache[key] = found
        self.sdists[key] = sdists
        return found

    def best(self, req, specs, allow_pre):
        cands = [c for c in self.candidates(req.name) if python_ok(c.requires_python)]
        ok = [c for c in cands if all(s.contains(c.version) for s in specs)]
        pre = allow_pre or any(s.mentions_prerelease() for s in specs)
        final = [c for c in ok if pre or not c.version.is_prerelease]
        if not final and ok:
            final = ok
        if not final:
            versions = sorted({c.version for c in cands if pre or not c.version.is_prerelease})
            msg = "ERROR: Could not find a version that satisfies the requirement %s (from versions: %s)" % (
                req.text if req.parent is None else str(req), ", ".join(str(v) for v in versions) or "none")
            if self.sdists.get(req.key) and not cands:
                msg += ("\nERROR: %s has only source distributions on the index (%s): secexec's pip installs "
                        "wheels only (building needs a compiler and subprocesses WASI lacks)" % (
                            req.name, ", ".join(self.sdists[req.key][:5])))
            raise PipError(msg + "\nERROR: No matching distribution found for %s" % (
                req.text if req.parent is None else str(req)))
        return max(final, key=lambda c: (c.version, -c.rank))


# ---- installed distributions ----

class Dist:
    def __init__(self, location, info_dir):
        self.location = location
        self.info = os.path.join(location, info_dir)
        self.egg = not info_dir.endswith(".dist-info")
        if self.egg and os.path.isfile(self.info):
            meta_path = self.info
        else:
            meta_path = os.path.join(self.info, "PKG-INFO" if self.egg else "METADATA")
        with open(meta_path, "rb") as f:
            self.meta = parse_headers(f.read(1 << 20))
        self.name = self.meta.get("Name") or info_dir.split("-")[0]
        self.version = self.meta.get("Version") or ""
        self.key = canonical(self.name)

    def read(self, name):
        try:
            with open(os.path.join(self.info, name), encoding="utf-8") as f:
                return f.read()
        except OSError:
            return None

    def requires(self):
        if self.egg:
            text = self.read("requires.txt") or ""
            out = []
            for line in text.splitlines():
                if line.startswith("["):
                    break
                if line.strip():
                    out.append(line.strip())
            return out
        return self.meta.get_all("Requires-Dist") or []

    def record(self):
        text = self.read("RECORD")
        if text is None:
            return None
        return [row[0] for row in csv.reader(io.StringIO(text)) if row]


def iter_dists(paths):
    seen = set()
    for d in paths:
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        for n in names:
            if not (n.endswith(".dist-info") or n.endswith(".egg-info")):
                continue
            try:
                dist = Dist(d, n)
            except (OSError, ValueError):
                continue
            if dist.key in seen:
                continue
            seen.add(dist.key)
            yield dist


def default_paths():
    return [p for p in sys.path if p and os.path.isdir(p) and not p.startswith(os.path.dirname(__file__))]


# ---- where things go ----

def in_venv():
    return sys.prefix != sys.base_prefix


def user_base():
    return os.environ.get("PYTHONUSERBASE") or os.path.expanduser("~/.local")


class Scheme:
    def __init__(self, site, scripts, data, interpreter):
        self.site, self.scripts, self.data, self.interpreter = site, scripts, data, interpreter
        self.headers = os.path.join(data, "include", "site", "python" + PYVER)


def choose_scheme(options):
    interp = sys.executable if in_venv() else "/usr/bin/python3"
    if options.target:
        t = os.path.abspath(options.target)
        return Scheme(t, os.path.join(t, "bin"), t, interp)
    if in_venv():
        if options.user:
            raise PipError("Can not perform a '--user' install. User site-packages are not visible in this virtualenv.")
        site = os.path.join(sys.prefix, "lib", "python" + PYVER, "site-packages")
        return Scheme(site, os.path.join(sys.prefix, "bin"), sys.prefix, interp)
    if not options.user:
        print("Defaulting to user installation because normal site-packages is not writeable")
    base = user_base()
    return Scheme(os.path.join(base, "lib", "python" + PYVER, "site-packages"),
                  os.path.join(base, "bin"), base, interp)


def scheme_paths(options):
    """Where installed distributions are looked for."""
    if options.target:
        return [os.path.abspath(options.target)]
    return default_paths()


# ---- installing a wheel ----

def safe_member(name):
    """Whether a wheel member (or RECORD) path stays inside the wheel: no
    absolute path, no "..", no drive, no backslash tricks."""
    if not name or name.startswith("/") or "\\" in name or "\0" in name or re.match(r"^[A-Za-z]:", name):
        return False
    return all(p not in ("..",) for p in name.split("/"))


def inside(path, base):
    path, base = os.path.normpath(path), os.path.normpath(base)
    return path == base or path.startswith(base.rstrip("/") + "/")


def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


SCRIPT_TEMPLATE = """#!%s
# -*- coding: utf-8 -*-
import re
import sys
from %s import %s
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit(%s())
"""


def install_wheel(path, scheme, requested):
    """Unpacks a wheel into the scheme; returns the dist-info name. A
    failure leaves nothing behind."""
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as e:
        raise PipError("%s is not a valid wheel file: %s" % (os.path.basename(path), e)) from e
    with zf:
        names = [i.filename for i in zf.infolist()]
        bad = [n for n in names if not safe_member(n)]
        if bad:
            raise PipError("The wheel %s has a file %r outside its directory: refusing to install it" % (
                os.path.basename(path), bad[0]))
        infos = {n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info")}
        if len(infos) != 1:
            raise PipError("%s is not a valid wheel file: it must contain exactly one .dist-info directory" %
                           os.path.basename(path))
        info_dir = infos.pop()
        data_dir = info_dir[:-len(".dist-info")] + ".data"
        try:
            record = zf.read(info_dir + "/RECORD").decode("utf-8")
            wheel_meta = parse_headers(zf.read(info_dir + "/WHEEL").decode("utf-8"))
        except (KeyError, UnicodeError) as e:
            raise PipError("%s is not a valid wheel file: %s" % (os.path.basename(path), e)) from e
        for row in csv.reader(io.StringIO(record)):
            if row and not safe_member(row[0]):
                raise PipError("The wheel %s has a RECORD entry %r outside its directory: refusing to install it" %
                               (os.path.basename(path), row[0]))
        purelib = (wheel_meta.get("Root-Is-Purelib") or "true").strip().lower() == "true"
        if not purelib:
            raise PipError("%s is not a pure-Python wheel (Root-Is-Purelib: false): it cannot be installed here" %
                           os.path.basename(path))
        installed = []  # paths, for RECORD and for undoing
        executables = []
        created = []  # directories made, for undoing

        def makedirs(d):
            missing = []
            while d and not os.path.isdir(d):
                missing.append(d)
                d = os.path.dirname(d)
            for m in reversed(missing):
                os.mkdir(m)
                created.append(m)

        def dest_of(name):
            if name.startswith(data_dir + "/"):
                parts = name[len(data_dir) + 1:].split("/", 1)
                if len(parts) < 2 or not parts[1]:
                    return None, None
                base = {"purelib": scheme.site, "platlib": scheme.site, "scripts": scheme.scripts,
                        "data": scheme.data, "headers": os.path.join(scheme.headers, info_dir.split("-")[0])}.get(parts[0])
                if base is None:
                    raise PipError("Unknown scheme key used in %s: %s" % (os.path.basename(path), parts[0]))
                return os.path.join(base, parts[1]), parts[0]
            return os.path.join(scheme.site, name), None

        try:
            for zi in zf.infolist():
                if zi.is_dir():
                    continue
                name = zi.filename
                if name.endswith("/RECORD") and name.startswith(info_dir + "/"):
                    continue
                dest, key = dest_of(name)
                if dest is None:
                    continue
                base = scheme.scripts if key == "scripts" else (scheme.site if key in (None, "purelib", "platlib") else scheme.data)
                if not inside(dest, base if key != "headers" else scheme.headers):
                    raise PipError("The wheel %s has a file %r outside its directory: refusing to install it" % (
                        os.path.basename(path), name))
                makedirs(os.path.dirname(dest))
                installed.append(dest)
                with zf.open(zi) as src, open(dest, "wb") as out:
                    if key == "scripts":
                        first = src.readline(4096)
                        if first.startswith(b"#!python"):
                            first = b"#!" + scheme.interpreter.encode() + first[len(b"#!python"):]
                        out.write(first)
                    shutil.copyfileobj(src, out, 1 << 16)
                if key == "scripts":
                    executables.append(dest)
            # Entry points become launcher scripts.
            eps = None
            try:
                eps = zf.read(info_dir + "/entry_points.txt").decode("utf-8")
            except KeyError:
                pass
            scripts = []
            if eps:
                cp = configparser.ConfigParser(delimiters=("=",), interpolation=None)
                cp.optionxform = str
                try:
                    cp.read_string(eps)
                except configparser.Error as e:
                    raise PipError("Invalid entry_points.txt in %s: %s" % (os.path.basename(path), e)) from e
                for section in ("console_scripts", "gui_scripts"):
                    if not cp.has_section(section):
                        continue
                    for sname, target in cp.items(section):
                        m = re.match(r"^\s*([\w.]+)\s*:\s*([\w.]+)\s*(\[.*\])?\s*$", target)
                        if not m or "/" in sname or sname in ("", ".", ".."):
                            raise PipError("Invalid script entry point: %s = %s" % (sname, target))
                        dest = os.path.join(scheme.scripts, sname)
                        makedirs(scheme.scripts)
                        attr = m[2].split(".")[0]
                        with open(dest, "w") as f:
                            f.write(SCRIPT_TEMPLATE % (scheme.interpreter, m[1], attr, m[2]))
                        executables.append(dest)
                        installed.append(dest)
                        scripts.append(sname)
            make_executable(executables)
            info_path = os.path.join(scheme.site, info_dir)
            extra = {"INSTALLER": b"pip\n"}
            if requested:
                extra["REQUESTED"] = b""
            for n, b in extra.items():
                with open(os.path.join(info_path, n), "wb") as f:
                    f.write(b)
                installed.append(os.path.join(info_path, n))
            rows = []
            for p in installed:
                with open(p, "rb") as f:
                    data = f.read()
                rows.append((os.path.relpath(p, scheme.site), record_hash(data), str(len(data))))
            rows.append((os.path.relpath(os.path.join(info_path, "RECORD"), scheme.site), "", ""))
            buf = io.StringIO()
            w = csv.writer(buf, lineterminator="\n")
            for r in sorted(rows):
                w.writerow(r)
            with open(os.path.join(info_path, "RECORD"), "w", encoding="utf-8") as f:
                f.write(buf.getvalue())
        except BaseException:
            for p in installed:
                try:
                    os.remove(p)
                except OSError:
                    pass
            for d in reversed(created):
                try:
                    os.rmdir(d)
                except OSError:
                    pass
            raise
        return info_dir, scripts


def make_executable(paths):
    """Sets mode 755: os.chmod cannot on WASI (no permission bits in
    preview 1), so the VM's chmod does it through subprocess."""
    paths = list(paths)
    for p in paths:
        try:
            os.chmod(p, 0o755)
        except OSError:
            pass
    todo = []
    for p in paths:
        try:
            if os.stat(p).st_mode & 0o111 == 0:
                todo.append(p)
        except OSError:
            pass
    if todo:
        import subprocess
        try:
            subprocess.run(["chmod", "755", "--"] + todo, check=False, stdin=subprocess.DEVNULL)
        except OSError as e:
            print("WARNING: could not make %s executable: %s" % (", ".join(todo), e), file=sys.stderr)


def on_path(d):
    return any(os.path.normpath(p) == os.path.normpath(d) for p in os.environ.get("PATH", "").split(":") if p)


# ---- uninstalling ----

def uninstall_paths(dist, bases):
    """The files of an installed distribution, from its RECORD; entries
    outside the bases (the scheme's directories) are never removed."""
    rec = dist.record()
    if rec is None:
        raise PipError("Cannot uninstall %s %s, RECORD file not found. Hint: The package was installed by a "
                       "tool other than pip, or its installation is corrupt." % (dist.name, dist.version))
    out = set()
    for r in rec:
        p = os.path.normpath(os.path.join(dist.location, r))
        if not any(inside(p, b) for b in bases):
            err("WARNING: Not removing %s: it is outside the environment" % p)
            continue
        out.add(p)
        if p.endswith(".py"):
            cache = os.path.join(os.path.dirname(p), "__pycache__")
            stem = os.path.basename(p)[:-3] + "."
            try:
                for c in os.listdir(cache):
                    if c.startswith(stem) and c.endswith(".pyc"):
                        out.add(os.path.join(cache, c))
            except OSError:
                pass
    out.add(dist.info)
    return sorted(out)


def remove_dist(dist, bases, paths=None):
    if paths is None:
        paths = uninstall_paths(dist, bases)
    dirs = set()
    for p in paths:
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p, ignore_errors=True)
        else:
            try:
                os.remove(p)
            except FileNotFoundError:
                pass
        dirs.add(os.path.dirname(p))
    # Remove directories left empty inside the site directory, deepest
    # first (a scripts directory such as ~/.local/bin stays, as with pip).
    site = os.path.normpath(bases[0])
    for d in sorted(dirs, key=len, reverse=True):
        while d and os.path.normpath(d) != site and inside(d, site):
            try:
                os.rmdir(d)
            except OSError:
                break
            d = os.path.dirname(d)
    return paths


def bases_of(dist):
    """The directories an uninstall may touch: the site directory and its
    environment's prefix."""
    loc = os.path.normpath(dist.location)
    m = re.match(r"^(.*)/lib/python[\d.]+/site-packages$", loc)
    if m:
        return [loc, m[1]]
    return [loc]


# ---- commands ----

def looking_in(finder, options):
    if finder.indexes and finder.indexes != [PYPI]:
        print("Looking in indexes: " + ", ".join(redact(u) for u in finder.indexes))


def human(n):
    for unit in ("bytes", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return ("%d %s" % (n, unit)) if unit == "bytes" else ("%.1f %s" % (n, unit))
        n /= 1000.0


def download(session, cand, tmpdir):
    frag = urllib.parse.urldefrag(cand.url)[1]
    want = None
    m = re.match(r"^(sha1|sha224|sha256|sha384|sha512|md5)=([0-9a-fA-F]+)$", frag)
    if m:
        want = (m[1], m[2].lower())
    dest = os.path.join(tmpdir, cand.filename)
    try:
        with session.open(cand.url) as r, open(dest, "wb") as out:
            size = r.headers.get("Content-Length")
            print("  Downloading %s%s" % (redact(urllib.parse.urldefrag(cand.url)[0]),
                                          " (%s)" % human(int(size)) if size and size.isdigit() else ""))
            h = hashlib.new(want[0]) if want else None
            while True:
                chunk = r.read(1 << 16)
                if not chunk:
                    break
                if h:
                    h.update(chunk)
                out.write(chunk)
    except urllib.error.HTTPError as e:
        raise PipError("HTTP error %d while getting %s" % (e.code, redact(cand.url))) from e
    except OSError as e:
        raise PipError("Could not install packages due to an OSError: %s" % e) from e
    if want and h.hexdigest() != want[1]:
        raise PipError("THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE. If you have updated "
                       "the package versions, please update the hashes. Otherwise, examine the package contents "
                       "carefully; someone may have tampered with them.\n    %s from %s:\n        Expected %s %s\n"
                       "             Got        %s" % (cand.name, redact(cand.url), want[0], want[1], h.hexdigest()))
    return dest


def cmd_install(options, args):
    reqs_text = list(args)
    for rf in options.requirements:
        reqs_text += read_requirements(rf, options)
    if not reqs_text:
        raise PipError("You must give at least one requirement to install (see \"pip help install\")")
    scheme = choose_scheme(options)
    session = Session(options)
    finder = Finder(session, options)
    looking_in(finder, options)
    installed = {d.key: d for d in iter_dists(scheme_paths(options) if options.target else
                                              [scheme.site] + default_paths())}
    queue = [Requirement(t) for t in reqs_text]
    chosen = {}   # key -> (Candidate, Requirement, extras)
    specs = {}    # key -> all specifiers seen
    order = []
    keep = set()
    extras_of = {}  # key -> the extras asked for
    deps_of = {}  # key -> the keys it requires
    tmpdir = tempfile.mkdtemp(prefix="pip-")
    try:
        while queue:
            req = queue.pop(0)
            if not req.applies(tuple(req.parent_extras) if hasattr(req, "parent_extras") else ("",)):
                continue
            key = req.key
            specs.setdefault(key, []).extend(req.specs)
            if key not in chosen and key not in keep:
                extras_of.setdefault(key, set()).update(req.extras)
            if key in chosen or key in keep:
                c = chosen.get(key)
                have = c[0].version if c else parse_version(installed[key].version)
                if have is None or all(s.contains(have) for s in specs[key]):
                    # New extras of a chosen package add their requirements.
                    new = req.extras - extras_of.get(key, set())
                    if new and not options.no_deps:
                        extras_of.setdefault(key, set()).update(new)
                        requires = (c[2].get_all("Requires-Dist") or []) if c else installed[key].requires()
                        for r in requires:
                            sub = Requirement(r, parent=req.name)
                            if sub.marker and "extra" in sub.marker:
                                sub.parent_extras = sorted(new)
                                queue.append(sub)
                    continue
                if c is not None and c[0].url is None:
                    raise PipError("ResolutionImpossible: %s %s is needed, but %s==%s was chosen" % (
                        req.name, ",".join(map(str, specs[key])), req.name, have))
                # A later requirement narrows an earlier choice: choose
                # again with every specifier seen (no backtracking beyond
                # this; the earlier choice's own requirements stay).
                chosen.pop(key, None)
                keep.discard(key)
                if key in order:
                    order.remove(key)
            dist = installed.get(key)
            explicit = req.parent is None
            if dist is not None and not options.force_reinstall and not (options.upgrade and explicit and not req.path):
                v = parse_version(dist.version)
                if v is not None and all(s.contains(v) for s in specs[key]):
                    where = dist.location
                    if req.parent is None:
                        print("Requirement already satisfied: %s in %s (%s)" % (req.text, where, dist.version))
                    else:
                        print("Requirement already satisfied: %s in %s (from %s) (%s)" % (
                            str(req), where, req.parent, dist.version))
                    keep.add(key)
                    if not options.no_deps:
                        for r in dist.requires():
                            sub = Requirement(r, parent=dist.name)
                            sub.parent_extras = [""] + sorted(req.extras)
                            queue.append(sub)
                    continue
            if req.path:
                wn = parse_wheel_name(os.path.basename(req.path))
                print("Processing %s" % (req.text if not os.path.isabs(req.text) else req.path))
                cand = Candidate(wn[0], Version(wn[1]), None, os.path.basename(req.path), 0, None, path=req.path)
                if wheel_rank(wn[2], wn[3], wn[4]) is None:
                    raise PipError("%s is not a supported wheel on this platform." % os.path.basename(req.path))
            else:
                print("Collecting %s" % (req.text if req.parent is None else str(req)))
                cand = finder.best(req, specs[key], options.pre)
                if dist is not None and options.upgrade and not options.force_reinstall and \
                        parse_version(dist.version) == cand.version:
                    print("Requirement already satisfied: %s in %s (%s)" % (req.text, dist.location, dist.version))
                    keep.add(key)
                    continue
                cand.path = download(session, cand, tmpdir)
            with zipfile.ZipFile(cand.path) as zf:
                metas = [n for n in zf.namelist() if re.match(r"^[^/]+\.dist-info/METADATA$", n)]
                if len(metas) != 1:
                    raise PipError("%s is not a valid wheel file: no single .dist-info/METADATA" % cand.filename)
                info = zf.getinfo(metas[0])
                if info.file_size > 16 << 20:
                    raise PipError("%s is not a valid wheel file: METADATA is %d bytes" % (cand.filename, info.file_size))
                meta = parse_headers(zf.read(metas[0]))
            if canonical(meta.get("Name", "")) != key:
                raise PipError("Requested %s, but the wheel %s is named %s" % (req.name, cand.filename, meta.get("Name")))
            if not python_ok(meta.get("Requires-Python")):
                raise PipError("Package '%s' requires a different Python: %s not in '%s'" % (
                    meta.get("Name"), platform.python_version(), meta.get("Requires-Python")))
            chosen[key] = (cand, req, meta)
            order.append(key)
            if not options.no_deps:
                for r in meta.get_all("Requires-Dist") or []:
                    sub = Requirement(r, parent=meta.get("Name"))
                    sub.parent_extras = [""] + sorted(req.extras)
                    deps_of.setdefault(key, []).append(sub.key)
                    queue.append(sub)
        if not chosen:
            return 0
        # Dependencies first (depth first, in the order they were found).
        ordered, seen = [], set()

        def visit(k):
            if k in seen or k not in chosen:
                return
            seen.add(k)
            for d in deps_of.get(k, ()):
                visit(d)
            ordered.append(k)

        for k in order:
            visit(k)
        names = [chosen[k][2].get("Name") for k in ordered]
        print("Installing collected packages: " + ", ".join(names))
        done = []
        for k in ordered:
            cand, req, meta = chosen[k]
            old = installed.get(k)
            if old is not None and (options.target is None or inside(old.location, scheme.site)):
                if inside(old.location, scheme.site) or not options.target:
                    print("  Attempting uninstall: %s" % old.name)
                    print("    Found existing installation: %s %s" % (old.name, old.version))
                    if os.path.normpath(old.location) == os.path.normpath(scheme.site):
                        remove_dist(old, bases_of(old))
                        print("    Uninstalling %s-%s:" % (old.name, old.version))
                        print("      Successfully uninstalled %s-%s" % (old.name, old.version))
                    else:
                        print("    Not uninstalling %s at %s, outside environment %s" % (
                            k, old.location, os.path.dirname(scheme.site)))
            _, scripts = install_wheel(cand.path, scheme, req.parent is None)
            # pip does not warn about the interpreter's own directory (a
            # virtual environment's bin).
            if scripts and not options.no_warn_script_location and not on_path(scheme.scripts) and \
                    os.path.normpath(scheme.scripts) != os.path.dirname(os.path.normpath(sys.executable)):
                if len(scripts) == 1:
                    err("  WARNING: The script %s is installed in '%s' which is not on PATH." % (scripts[0], scheme.scripts))
                else:
                    err("  WARNING: The scripts %s are installed in '%s' which is not on PATH." % (
                        ", ".join(sorted(scripts)[:-1]) + " and " + sorted(scripts)[-1], scheme.scripts))
                err("  Consider adding this directory to PATH or, if you prefer to suppress this warning, "
                    "use --no-warn-script-location.")
            done.append("%s-%s" % (meta.get("Name"), meta.get("Version")))
        print("Successfully installed " + " ".join(sorted(done, key=str.lower)))
        return 0
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def find_installed(options, names):
    dists = {d.key: d for d in iter_dists(scheme_paths(options))}
    return [(n, dists.get(canonical(n))) for n in names]


def cmd_uninstall(options, args):
    names = list(args)
    for rf in options.requirements:
        names += [Requirement(t).name for t in read_requirements(rf, options)]
    if not names:
        raise PipError("You must give at least one requirement to uninstall (see \"pip help uninstall\")")
    for name, dist in find_installed(options, [Requirement(n).name for n in names]):
        if dist is None:
            err("WARNING: Skipping %s as it is not installed." % name)
            continue
        bases = bases_of(dist)
        print("Found existing installation: %s %s" % (dist.name, dist.version))
        paths = uninstall_paths(dist, bases)
        print("Uninstalling %s-%s:" % (dist.name, dist.version))
        if not options.yes:
            print("  Would remove:")
            shown = set()
            for p in paths:
                top = os.path.relpath(p, dist.location).split("/")[0]
                q = os.path.join(dist.location, top) + ("/*" if top != os.path.basename(p) or os.path.isdir(p) else "")
                if inside(p, dist.location) and q not in shown:
                    shown.add(q)
                    print("    " + q)
                elif not inside(p, dist.location):
                    print("    " + p)
            sys.stdout.write("Proceed (Y/n)? ")
            sys.stdout.flush()
            answer = sys.stdin.readline().strip().lower()
            if answer not in ("", "y", "yes"):
                continue
        remove_dist(dist, bases, paths)
        print("  Successfully uninstalled %s-%s" % (dist.name, dist.version))
    return 0


def list_dists(options):
    if options.path:
        paths = options.path
    elif options.user:
        paths = [os.path.join(user_base(), "lib", "python" + PYVER, "site-packages")]
    else:
        paths = scheme_paths(options)
    return sorted(iter_dists(paths), key=lambda d: d.name.lower())


def cmd_list(options, args):
    dists = list_dists(options)
    fmt = options.format
    if fmt == "freeze":
        for d in dists:
            print("%s==%s" % (d.name, d.version))
    elif fmt == "json":
        print(json.dumps([{"name": d.name, "version": d.version} for d in dists]))
    else:
        if not dists:
            return 0
        w1 = max(len("Package"), *(len(d.name) for d in dists))
        w2 = max(len("Version"), *(len(d.version) for d in dists))
        print("Package".ljust(w1) + " " + "Version".ljust(w2))
        print("-" * w1 + " " + "-" * w2)
        for d in dists:
            print((d.name.ljust(w1) + " " + d.version.ljust(w2)).rstrip())
    return 0


def cmd_freeze(options, args):
    for d in list_dists(options):
        if not options.all and d.key in FREEZE_SKIP:
            continue
        print("%s==%s" % (d.name, d.version))
    return 0


def base_requires(dist):
    """A distribution's requirements that apply here, without extras."""
    out = []
    for text in dist.requires():
        try:
            r = Requirement(text)
            if r.applies():
                out.append(r)
        except PipError:
            pass
    return out


def cmd_show(options, args):
    if not args:
        err("ERROR: Please provide a package name or names.")
        return 1
    all_dists = list(iter_dists(scheme_paths(options)))
    by_key = {d.key: d for d in all_dists}
    missing = [a for a in args if canonical(a) not in by_key]
    if missing:
        err("WARNING: Package(s) not found: " + ", ".join(missing))
    first = True
    for a in args:
        d = by_key.get(canonical(a))
        if d is None:
            continue
        if not first:
            print("---")
        first = False
        # As pip: one name per requirement line, duplicates kept.
        reqs = sorted((r.name for r in base_requires(d)), key=str.lower)
        required_by = sorted(o.name for o in all_dists if any(r.key == d.key for r in base_requires(o)))
        print("Name: %s" % d.name)
        print("Version: %s" % d.version)
        print("Summary: %s" % (d.meta.get("Summary") or ""))
        print("Home-page: %s" % (d.meta.get("Home-page") or ""))
        print("Author: %s" % (d.meta.get("Author") or ""))
        print("Author-email: %s" % (d.meta.get("Author-email") or ""))
        print("License: %s" % (d.meta.get("License") or ""))
        print("Location: %s" % d.location)
        print("Requires: %s" % ", ".join(reqs))
        print("Required-by: %s" % ", ".join(required_by))
        if options.files:
            rec = d.record()
            print("Files:")
            if rec is None:
                print("Cannot locate RECORD or installed-files.txt")
            else:
                for r in sorted(rec):
                    print("  " + r)
    return 1 if len(missing) == len(args) else 0


def build_parser():
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message):
            err("ERROR: " + message)
            sys.exit(2)

    common = argparse.ArgumentParser(add_help=False)
    g = common.add_argument_group("General Options")
    g.add_argument("-v", "--verbose", action="count", default=0)
    g.add_argument("-q", "--quiet", action="count", default=0)
    g.add_argument("--isolated", action="store_true")
    g.add_argument("--timeout", type=float, default=None)
    g.add_argument("--retries", type=int, default=None)
    g.add_argument("--no-cache-dir", action="store_true")
    g.add_argument("--cache-dir")
    g.add_argument("--disable-pip-version-check", action="store_true")
    g.add_argument("--no-color", action="store_true")
    g.add_argument("--no-input", action="store_true")
    g.add_argument("--trusted-host", action="append", dest="trusted_hosts", default=None)
    g.add_argument("--python")
    g.add_argument("--require-virtualenv", action="store_true")
    g.add_argument("--root-user-action")
    idx = argparse.ArgumentParser(add_help=False)
    idx.add_argument("-i", "--index-url", dest="index_url")
    idx.add_argument("--extra-index-url", action="append", dest="extra_index_urls", default=None)
    idx.add_argument("--no-index", action="store_true", default=None)
    p = Parser(prog="pip", add_help=False)
    p.add_argument("-V", "--version", action="store_true")
    p.add_argument("-h", "--help", action="store_true")
    sub = p.add_subparsers(dest="command")
    ins = sub.add_parser("install", parents=[common, idx])
    ins.add_argument("-r", "--requirement", action="append", dest="requirements", default=[])
    ins.add_argument("-c", "--constraint", action="append", dest="constraints", default=[])
    ins.add_argument("-U", "--upgrade", action="store_true")
    ins.add_argument("--upgrade-strategy")
    ins.add_argument("--force-reinstall", action="store_true")
    ins.add_argument("--no-deps", action="store_true")
    ins.add_argument("--pre", action="store_true", default=None)
    ins.add_argument("--user", action="store_true")
    ins.add_argument("-t", "--target")
    ins.add_argument("--no-warn-script-location", action="store_true")
    ins.add_argument("--break-system-packages", action="store_true")
    ins.add_argument("--only-binary", action="append")
    ins.add_argument("--prefer-binary", action="store_true")
    ins.add_argument("--no-compile", action="store_true")
    ins.add_argument("--compile", action="store_true")
    ins.add_argument("--no-build-isolation", action="store_true")
    ins.add_argument("reqs", nargs="*")
    un = sub.add_parser("uninstall", parents=[common])
    un.add_argument("-y", "--yes", action="store_true")
    un.add_argument("-r", "--requirement", action="append", dest="requirements", default=[])
    un.add_argument("--break-system-packages", action="store_true")
    un.add_argument("reqs", nargs="*")
    for name in ("list", "freeze"):
        lp = sub.add_parser(name, parents=[common])
        lp.add_argument("--user", action="store_true")
        lp.add_argument("--path", action="append")
        lp.add_argument("--all", action="store_true")
        lp.add_argument("--exclude-editable", action="store_true")
        lp.add_argument("--local", "-l", action="store_true")
        if name == "list":
            lp.add_argument("--format", choices=["columns", "freeze", "json"], default="columns")
        lp.add_argument("reqs", nargs="*")
    sh = sub.add_parser("show", parents=[common])
    sh.add_argument("-f", "--files", action="store_true")
    sh.add_argument("reqs", nargs="*")
    return p


USAGE = """
Usage:
  pip <command> [options]

Commands:
  install                     Install packages.
  uninstall                   Uninstall packages.
  freeze                      Output installed packages in requirements format.
  list                        List installed packages.
  show                        Show information about installed packages.

secexec's pip installs pure-Python wheels from PEP 503 indexes
(docs/python-and-git.md); source distributions are not built.
"""


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    commands = ("install", "uninstall", "list", "freeze", "show")
    words = [a for a in argv if not a.startswith("-")]
    if words and words[0] == "help":
        print(USAGE.strip("\n"))
        return 0
    if words and words[0] not in commands and argv.index(words[0]) == 0:
        err('ERROR: unknown command "%s"' % words[0])
        return 1
    parser = build_parser()
    try:
        options = parser.parse_args(argv)
    except SystemExit as e:
        return e.code
    if options.version:
        print("pip %s from %s (python %s)" % (VERSION, os.path.dirname(os.path.abspath(__file__)) + "/pip", PYVER))
        return 0
    if options.command is None or options.help:
        print(USAGE.strip("\n"))
        return 0
    conf = load_config(options.command, options.isolated)

    def setting(attr, key, default=None, multi=False):
        if getattr(options, attr, None) not in (None, []):
            return
        if key in conf:
            v = conf[key]
            setattr(options, attr, v.split() if multi else v)
        else:
            setattr(options, attr, default)

    setting("index_url", "index-url", PYPI)
    setting("extra_index_urls", "extra-index-url", [], multi=True)
    setting("trusted_hosts", "trusted-host", [], multi=True)
    if getattr(options, "no_index", None) is None:
        options.no_index = truthy(conf.get("no-index", "0"))
    if getattr(options, "pre", None) is None:
        options.pre = truthy(conf.get("pre", "0"))
    if options.timeout is None:
        try:
            options.timeout = float(conf.get("timeout", 15))
        except ValueError:
            options.timeout = 15.0
    for attr in ("user", "target", "upgrade", "force_reinstall", "no_deps", "no_warn_script_location", "yes",
                 "requirements", "path", "all", "format", "files"):
        if not hasattr(options, attr):
            setattr(options, attr, None if attr not in ("requirements",) else [])
    if options.command == "install":
        if not options.target and conf.get("target"):
            options.target = conf["target"]
        if not options.user and truthy(conf.get("user", "0")):
            options.user = True
        if options.user and options.target:
            err("ERROR: Can not combine '--user' and '--target'")
            return 1
    if options.require_virtualenv or truthy(conf.get("require-virtualenv", "0")):
        if not in_venv():
            err("ERROR: Could not find an activated virtualenv (required).")
            return 3
    args = options.reqs
    handlers = {"install": cmd_install, "uninstall": cmd_uninstall, "list": cmd_list,
                "freeze": cmd_freeze, "show": cmd_show}
    stdout = sys.stdout
    try:
        if options.quiet:
            sys.stdout = open(os.devnull, "w")
        return handlers[options.command](options, args)
    except PipError as e:
        msg = str(e)
        err(msg if msg.startswith("ERROR:") else "ERROR: " + msg)
        return 1
    except KeyboardInterrupt:
        err("ERROR: Operation cancelled by user")
        return 1
    except (OSError, zipfile.BadZipFile, MemoryError) as e:
        err("ERROR: Could not install packages due to an %s: %s" % (type(e).__name__, e))
        return 1
    finally:
        if sys.stdout is not stdout:
            sys.stdout.close()
            sys.stdout = stdout


if __name__ == "__main__":
    # /usr/bin/pip runs "python3 THIS-FILE /usr/bin/pip ARGS...".
    sys.exit(main(sys.argv[2:]))
