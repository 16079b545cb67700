import subprocess
import sys

PY = sys.executable


def run(*args, input=None):
    return subprocess.run([PY, "-m", "ember", *args], capture_output=True, text=True,
                          input=input, timeout=120)


def test_cli_sql_prints_show_table():
    r = run("sql", "select 1 as a")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "+---+\n|  a|\n+---+\n|  1|\n+---+\n\n"


def test_cli_error_exit_code():
    r = run("sql", "select nope")
    assert r.returncode == 1
    assert r.stderr.startswith("Error: [UNRESOLVED_COLUMN.WITHOUT_SUGGESTION]")


def test_cli_run_file_and_conf(tmp_path):
    f = tmp_path / "q.sql"
    f.write_text("SET spark.x=1;\n-- comment\nCREATE TEMP VIEW t AS SELECT 1 AS a;\n"
                 "SELECT a + 1 AS b FROM t;\n")
    r = run("--conf", "spark.sql.caseSensitive=true", "--batch-size", "2", "run", str(f))
    assert r.returncode == 0, r.stderr
    assert "|spark.x|    1|" in r.stdout
    assert "|  b|\n+---+\n|  2|" in r.stdout


def test_cli_shell_reads_multiline_statements(tmp_path):
    r = subprocess.run([PY, "-m", "ember", "shell"], capture_output=True, text=True,
                       input="select\n  2 as x;\n.quit\n", timeout=120,
                       env={"HOME": str(tmp_path), "PATH": ""})
    assert r.returncode == 0, r.stderr
    assert "|  x|" in r.stdout and "|  2|" in r.stdout
