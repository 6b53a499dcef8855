"""Latency of the Python client's calls against a running `secexec serve`.

    SECEXEC_URL=http://127.0.0.1:8080 SECEXEC_TOKEN=... python3 bench.py

Prints the mean time of each call (a measurement, not a test).
"""

import asyncio
import os
import time
from typing import Callable

from secexec_client import AsyncClient, Client

URL, TOKEN = os.environ["SECEXEC_URL"], os.environ["SECEXEC_TOKEN"]


def mean(label: str, n: int, f: Callable[[], object]) -> None:
    f()  # warm: the connection, the engine
    start = time.perf_counter()
    for _ in range(n):
        f()
    print(f"{label}: {(time.perf_counter() - start) / n * 1000:.2f} ms/op over {n}")


def sync() -> None:
    mb = os.urandom(1 << 20)

    def spawn() -> None:
        p = vm.spawn(["cat"])
        p.write(b"x")
        p.close_stdin()
        p.wait()

    with Client(URL, TOKEN) as c, c.new_vm() as vm:
        mean("sync exec true", 100, lambda: vm.exec("true"))
        mean("sync exec true streamed", 100, lambda: vm.exec("true", on_stdout=lambda b: None))
        mean("sync write_file 1 MiB", 30, lambda: vm.fs.write_file("/tmp/mb", mb))
        mean("sync read_file 1 MiB", 30, lambda: vm.fs.read_file("/tmp/mb"))
        mean("sync js.evaluate 1+1", 100, lambda: vm.js.evaluate("1+1"))
        mean("sync spawn cat, write, wait", 30, spawn)


async def asynchronous() -> None:
    async with AsyncClient(URL, TOKEN) as c:
        async with await c.new_vm() as vm:
            await vm.exec("true")
            start = time.perf_counter()
            for _ in range(100):
                await vm.exec("true")
            print(f"async exec true: {(time.perf_counter() - start) * 10:.2f} ms/op over 100")
            start = time.perf_counter()
            for _ in range(10):
                await asyncio.gather(*(vm.exec("true") for _ in range(8)))
            print(f"async exec true, 8 at a time: {80 / (time.perf_counter() - start):.0f} execs/s")


if __name__ == "__main__":
    sync()
    asyncio.run(asynchronous())
