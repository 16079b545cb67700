"""The interactive shell in a real terminal (a pty): the prompt, dot commands, Tab completion
of table and column names, EXPLAIN as plain text, and Ctrl-C cancelling a running query while
the shell keeps running."""

from __future__ import annotations

import os
import pty
import select
import signal
import sys
import time

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a pty")


class Terminal:
    """``python -m ember shell`` on the slave side of a pty; read and type on the master side."""

    def __init__(self, home: str) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the shell
            env = {**os.environ, "HOME": home, "TERM": "dumb"}
            os.execve(sys.executable, [sys.executable, "-m", "ember", "shell"], env)
        self.seen = ""

    def read_until(self, text: str, timeout: float = 60.0) -> str:
        """Output up to and including ``text`` (consumed); fails after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            left = deadline - time.monotonic()
            assert left > 0, f"no {text!r} in terminal output: {self.seen[-2000:]!r}"
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                self.seen += chunk.decode("utf-8", "replace").replace("\r\n", "\n")
        assert text in self.seen, self.seen[-2000:]
        i = self.seen.index(text) + len(text)
        out, self.seen = self.seen[:i], self.seen[i:]
        return out

    def type(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def run(self, line: str, timeout: float = 60.0) -> str:
        """Type ``line`` and Enter; the output up to the next prompt."""
        self.type(line + "\n")
        return self.read_until("ember> ", timeout)

    def close(self) -> int:
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        return os.waitstatus_to_exitcode(status)


def test_shell_in_a_terminal(tmp_path) -> None:
    term = Terminal(str(tmp_path))
    try:
        term.read_until("ember> ")
        term.type("CREATE TEMP VIEW numbers AS SELECT id AS amount_due FROM range(3);\n")
        term.read_until("ember> ")
        # Tab completes a column name and a table name
        term.type("SELECT amount_d\t FROM numb\t WHERE amount_due > 0;\n")
        out = term.read_until("ember> ")
        assert "|amount_due|" in out and "|         2|" in out and "|         0|" not in out
        assert "numbers" in term.run(".tables")
        term.run(".mode csv")
        assert "amount_due\n0\n1\n2\n" in term.run("SELECT amount_due FROM numbers;")
        term.run(".timer on")
        out = term.run("EXPLAIN SELECT 1 AS one;")
        assert "\n== Physical Plan ==\n" in out and "Time: " in out
        assert "|" not in out.split("== Physical Plan ==")[1]
        # Ctrl-C cancels a long query; the shell keeps running
        term.run(".timer off")
        term.run(".mode table")
        term.type("SELECT count(*) FROM range(0, 40000000000, 1, 2) WHERE id % 7 = 3;\n")
        time.sleep(1)
        start = time.monotonic()
        term.type("\x03")
        term.read_until("Query cancelled.", 60)
        term.read_until("ember> ", 60)
        assert time.monotonic() - start < 60
        term.type("SELECT 6 * 7 AS answer;\n")
        assert "|    42|" in term.read_until("ember> ")
        term.type(".quit\n")
        assert term.close() == 0
    except BaseException:
        try:
            os.kill(term.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        raise
