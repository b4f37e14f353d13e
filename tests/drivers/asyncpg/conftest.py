"""Prints the known-failure report lines of test_asyncpg.py after pytest's own
summary, where captured output would otherwise hide them."""

import test_asyncpg


def pytest_terminal_summary(terminalreporter):
    for line in test_asyncpg.REPORT:
        terminalreporter.write_line(line)
