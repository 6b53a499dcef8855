"""Tests of the Python client against a real `secexec serve`.

The server's URL and the tokens of two tenants come from the environment
(SECEXEC_URL, SECEXEC_TOKEN, SECEXEC_TOKEN_2); clients/clients_test.go
starts the server and runs: python3 -m unittest -v test_client
"""

import os
import unittest

from secexec_client import APIError, Client


class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.c = Client(os.environ["SECEXEC_URL"], os.environ["SECEXEC_TOKEN"])
        cls.other = Client(os.environ["SECEXEC_URL"], os.environ["SECEXEC_TOKEN_2"])
        cls.vm = cls.c.create_vm(env={"GREETING": "hello"})["id"]

    @classmethod
    def tearDownClass(cls):
        cls.c.delete_vm(cls.vm)

    def test_exec_bytes(self):
        data = bytes(range(256))
        res = self.c.exec(self.vm, argv=["cat"], stdin=data)
        self.assertEqual(res.exit_code, 0)
        self.assertEqual(res.outcome, "succeeded")
        self.assertEqual(res.stdout, data)
        res = self.c.exec(self.vm, cmd='echo "$GREETING" >&2; exit 7')
        self.assertEqual((res.exit_code, res.stderr), (7, b"hello\n"))

    def test_stream(self):
        events = list(self.c.exec_stream(self.vm, cmd="echo a; echo b >&2; echo c"))
        out = b"".join(d for e, d in events if e == "stdout")
        err = b"".join(d for e, d in events if e == "stderr")
        self.assertEqual((out, err), (b"a\nc\n", b"b\n"))
        self.assertEqual(events[-1][0], "exit")
        self.assertEqual(events[-1][1].exit_code, 0)

    def test_files(self):
        self.c.write_file(self.vm, "/workspace/py/a.bin", b"\x00\xff")
        self.assertEqual(self.c.read_file(self.vm, "/workspace/py/a.bin"), b"\x00\xff")
        self.assertEqual(self.c.stat(self.vm, "/workspace/py/a.bin")["size"], 2)
        self.c.upload_dir(self.vm, "/workspace/up", {"x.txt": b"x", "d/y.txt": b"y"})
        self.assertEqual(self.c.download_dir(self.vm, "/workspace/up"), {"x.txt": b"x", "d/y.txt": b"y"})
        names = [e["name"] for e in self.c.list_dir(self.vm, "/workspace/up")]
        self.assertEqual(sorted(names), ["d", "x.txt"])
        self.c.remove(self.vm, "/workspace/up", recursive=True)
        with self.assertRaises(APIError) as cm:
            self.c.read_file(self.vm, "/workspace/up/x.txt")
        self.assertEqual((cm.exception.status, cm.exception.code), (404, "not_found"))

    def test_evaluate(self):
        self.assertEqual(self.c.evaluate(self.vm, "[1+1, 'é']"), [2, "é"])
        with self.assertRaises(APIError) as cm:
            self.c.evaluate(self.vm, "null.x")
        self.assertEqual(cm.exception.code, "eval_error")

    def test_context(self):
        cid = self.c.create_context(self.vm)
        self.c.context_evaluate(self.vm, cid, "globalThis.n = 41")
        self.assertEqual(self.c.context_evaluate(self.vm, cid, "++n"), 42)
        self.c.delete_context(self.vm, cid)
        with self.assertRaises(APIError) as cm:
            self.c.context_evaluate(self.vm, cid, "n")
        self.assertEqual(cm.exception.status, 404)

    def test_tenancy(self):
        self.assertNotIn(self.vm, [v["id"] for v in self.other.list_vms()])
        with self.assertRaises(APIError) as cm:
            self.other.exec(self.vm, cmd="true")
        self.assertEqual(cm.exception.status, 404)
        bad = Client(os.environ["SECEXEC_URL"], "not-a-token")
        with self.assertRaises(APIError) as cm:
            bad.list_vms()
        self.assertEqual((cm.exception.status, cm.exception.code), (401, "unauthorized"))


if __name__ == "__main__":
    unittest.main()
