# secexec's venv: `python3 -m venv DIR` for CPython for WASI, whose build
# has no venv module (and no ensurepip). The environment has the usual
# layout (pyvenv.cfg, bin/python, bin/pip, bin/activate, an isolated
# lib/pythonX.Y/site-packages); bin/python is a shell launcher that names
# the environment to sitecustomize.py in SECEXEC_PYVENV, since a WASI
# interpreter cannot find pyvenv.cfg next to its own executable. pip is
# secexec's (the support layer's), so it is never copied in.
import argparse
import os
import shlex
import shutil
import sys

PYVER = "%d.%d" % sys.version_info[:2]
PYTHON = "/usr/bin/python3"

ACTIVATE = r'''# This file must be used with "source bin/activate" *from bash*
# you cannot run it directly

deactivate () {
    # reset old environment variables
    if [ -n "${_OLD_VIRTUAL_PATH:-}" ] ; then
        PATH="${_OLD_VIRTUAL_PATH:-}"
        export PATH
        unset _OLD_VIRTUAL_PATH
    fi
    if [ -n "${_OLD_VIRTUAL_PYTHONHOME:-}" ] ; then
        PYTHONHOME="${_OLD_VIRTUAL_PYTHONHOME:-}"
        export PYTHONHOME
        unset _OLD_VIRTUAL_PYTHONHOME
    fi

    if [ -n "${_OLD_VIRTUAL_PS1:-}" ] ; then
        PS1="${_OLD_VIRTUAL_PS1:-}"
        export PS1
        unset _OLD_VIRTUAL_PS1
    fi

    unset VIRTUAL_ENV
    unset VIRTUAL_ENV_PROMPT
    if [ ! "${1:-}" = "nondestructive" ] ; then
    # Self destruct!
        unset -f deactivate
    fi
}

# unset irrelevant variables
deactivate nondestructive

VIRTUAL_ENV=__VENV_DIR__
export VIRTUAL_ENV

_OLD_VIRTUAL_PATH="$PATH"
PATH="$VIRTUAL_ENV/bin:$PATH"
export PATH

# unset PYTHONHOME if set
if [ -n "${PYTHONHOME:-}" ] ; then
    _OLD_VIRTUAL_PYTHONHOME="${PYTHONHOME:-}"
    unset PYTHONHOME
fi

if [ -z "${VIRTUAL_ENV_DISABLE_PROMPT:-}" ] ; then
    _OLD_VIRTUAL_PS1="${PS1:-}"
    PS1=__VENV_PROMPT__"${PS1:-}"
    export PS1
    VIRTUAL_ENV_PROMPT=__VENV_PROMPT__
    export VIRTUAL_ENV_PROMPT
fi
'''


def launcher(env_dir, argv_tail):
    return ("#!/bin/sh\n"
            "# secexec venv launcher: python3 for WASI finds its environment in SECEXEC_PYVENV.\n"
            "SECEXEC_PYVENV=%s\nexport SECEXEC_PYVENV\nexec %s%s \"$@\"\n" % (
                shlex.quote(env_dir), PYTHON, argv_tail))


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def create(env_dir, system_site_packages=False, clear=False, prompt=None, with_pip=True, command=None):
    env_dir = os.path.abspath(env_dir)
    if os.path.exists(env_dir) and not os.path.isdir(env_dir):
        raise ValueError("Unable to create directory %r" % env_dir)
    if clear and os.path.isdir(env_dir):
        for n in os.listdir(env_dir):
            p = os.path.join(env_dir, n)
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p)
            else:
                os.remove(p)
    if prompt == ".":
        prompt = os.path.basename(os.getcwd())
    prompt = prompt or os.path.basename(env_dir)
    bindir = os.path.join(env_dir, "bin")
    site = os.path.join(env_dir, "lib", "python" + PYVER, "site-packages")
    for d in (bindir, site, os.path.join(env_dir, "include", "python" + PYVER)):
        os.makedirs(d, exist_ok=True)
    cfg = ["home = /usr/bin",
           "include-system-site-packages = %s" % ("true" if system_site_packages else "false"),
           "version = %d.%d.%d" % sys.version_info[:3],
           "executable = /usr/bin/python%s" % PYVER,
           "command = %s -m venv %s" % (PYTHON, command or env_dir)]
    if prompt != os.path.basename(env_dir):
        cfg.append("prompt = %r" % prompt)
    write(os.path.join(env_dir, "pyvenv.cfg"), "\n".join(cfg) + "\n")
    executables = []
    for name in ("python", "python3", "python" + PYVER):
        write(os.path.join(bindir, name), launcher(env_dir, ""))
        executables.append(os.path.join(bindir, name))
    if with_pip:
        for name in ("pip", "pip3", "pip" + PYVER):
            write(os.path.join(bindir, name), launcher(env_dir, " -m pip"))
            executables.append(os.path.join(bindir, name))
    from _secexec_pip import make_executable
    make_executable(executables)
    write(os.path.join(bindir, "activate"),
          ACTIVATE.replace("__VENV_DIR__", shlex.quote(env_dir)).replace("__VENV_PROMPT__", shlex.quote("(%s) " % prompt)))


def main(args=None):
    parser = argparse.ArgumentParser(prog="venv", description="Creates virtual Python environments in one or "
                                     "more target directories.")
    parser.add_argument("dirs", metavar="ENV_DIR", nargs="+", help="A directory to create the environment in.")
    parser.add_argument("--system-site-packages", default=False, action="store_true")
    parser.add_argument("--symlinks", action="store_true")
    parser.add_argument("--copies", action="store_true")
    parser.add_argument("--clear", action="store_true")
    parser.add_argument("--upgrade", action="store_true")
    parser.add_argument("--without-pip", dest="with_pip", action="store_false", default=True)
    parser.add_argument("--prompt")
    parser.add_argument("--upgrade-deps", action="store_true")
    options = parser.parse_args(args)
    for d in options.dirs:
        try:
            create(d, options.system_site_packages, options.clear, options.prompt, options.with_pip)
        except (OSError, ValueError) as e:
            print("Error: %s" % e, file=sys.stderr)
            return 1
    return 0
