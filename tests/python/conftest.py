# SPDX-License-Identifier: MIT
"""With NPU_PY_TAP=1 (make check: pytest -p no:terminal), the results as
TAP on stdout, one line per test, a failure's report as comment lines."""
import os
import sys

_TAP = os.environ.get("NPU_PY_TAP") == "1"
_n = 0


def _line(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _comment(text):
    for line in str(text).splitlines()[-30:]:
        _line("# " + line)


def pytest_collectreport(report):
    global _n
    if _TAP and report.failed:
        _n += 1
        _line("not ok %d - collecting %s" % (_n, report.nodeid or "the tests"))
        _comment(report.longreprtext)


def pytest_runtest_logreport(report):
    global _n
    if not _TAP:
        return
    name = report.nodeid.split("::", 1)[-1]
    if report.when == "call" or (report.when == "setup" and not report.passed):
        _n += 1
        if report.passed:
            _line("ok %d - %s" % (_n, name))
        elif report.skipped:
            why = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
            _line("ok %d - %s # SKIP %s" % (_n, name, why))
        else:
            _line("not ok %d - %s" % (_n, name))
            _comment(report.longreprtext)
    elif report.when == "teardown" and report.failed:
        _n += 1
        _line("not ok %d - %s (teardown)" % (_n, name))
        _comment(report.longreprtext)


def pytest_sessionfinish(session, exitstatus):
    if _TAP:
        _line("1..%d" % _n)
