"""Fixtures of the console tests: one browser and one keyed server per module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By

from tests.conftest import start_server
from tests.console.console_support import (
    ARGS,
    KEYS,
    SESSION,
    TRUST,
    browser,
    click_through,
    seed,
    shot,
    text,
)
from tests.rest.rest_support import KeyedServer, create_keys


@pytest.fixture(scope="module")
def driver() -> Iterator[webdriver.Chrome]:
    d = browser()
    yield d
    d.quit()  # (ks has quit it already: a second quit does nothing)


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("console-screenshots")


@pytest.fixture(scope="module")
def ks(tmp_path_factory, driver, shots) -> Iterator[KeyedServer]:
    """One server started twice: first keyless (trust mode: seeded, console looked at),
    then, after step 1 of the session was edited in the file and keys were created,
    with keys."""
    tmp = tmp_path_factory.mktemp("console")
    trusting = KeyedServer(start_server(tmp, *ARGS))
    try:
        seed(trusting)
        driver.get(trusting.url + "/console/signin")
        TRUST["signin"] = text(driver, "trust-mode")
        click_through(driver, driver.find_element(By.CSS_SELECTOR, "form button[type=submit]"))
        TRUST["memories"] = text(driver, "trust-mode")
        TRUST["count"] = text(driver, "count")
        shot(driver, shots, "trust-mode")
    finally:
        trusting.server.stop()
    con = duckdb.connect(str(tmp / "data" / "hatiproxy.agent.duckdb"))
    con.execute(
        "UPDATE hatidata_internal.cot_traces SET content = '{\"step\":99}' "
        "WHERE session_id = ? AND step_index = 1",
        [SESSION],
    )
    con.close()
    secrets = create_keys(tmp / "data", KEYS)
    ks = KeyedServer(start_server(tmp, *ARGS), secrets)
    yield ks
    # The browser's keep-alive connections would hold the server's graceful shutdown
    # (up to 10 s): close them first.
    driver.quit()
    ks.server.stop()
