"""What the console tests share: the keys and data seeded, a headless chromium, and the
steps a person takes in it (sign in, click through, read an element)."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import psycopg
import pytest
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

from tests.rest.rest_support import KeyedServer, KeySpec

KEYS = {
    "admin": KeySpec("admin"),
    "analyst": KeySpec("analyst"),
    "bot": KeySpec("agent", agent_id="bot"),
}
ARGS = ("--embedding-provider", "hash")
SESSION = f"console-{uuid.uuid4().hex[:8]}"
TRIGGER = {
    "name": "whales",
    "concept": "the blue whale is the largest animal",
    "threshold": 0.9,
    "actions": ["write_event"],
}
INSTALL = "install it with: apt-get install -y chromium chromium-driver"


def browser() -> webdriver.Chrome:
    chromium = shutil.which("chromium")
    driver = shutil.which("chromedriver")
    if chromium is None or driver is None:
        pytest.fail(f"the console tests need Debian's chromium and chromedriver; {INSTALL}")
    opts = Options()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=412,915"):
        opts.add_argument(arg)  # 412 px: a phone's width
    try:
        return webdriver.Chrome(service=Service(driver), options=opts)
    except WebDriverException as exc:
        pytest.fail(f"chromium did not start ({exc.msg}); {INSTALL}")


def seed(ks: KeyedServer) -> None:
    """An org trigger, memories of two agents and a 3-step session of bot, keyless
    (trust mode)."""
    r = ks.request("POST", "/v1/organizations/local/triggers", key=None, json=TRIGGER)
    assert r.ok, r.text
    memories = [
        ("bot", "the blue whale is the largest animal", 0.9),
        ("bot", "whale songs travel far under water", 0.3),
        ("carol", "carol's private whale notes", 0.8),
    ]
    for agent, content, importance in memories:
        body = {"agent_id": agent, "memory_type": "fact", "content": content}
        r = ks.request(
            "POST",
            "/v1/organizations/local/agent-memory",
            key=None,
            json={**body, "importance": importance},
        )
        assert r.ok, r.text
    traces = [
        {
            "trace_id": str(uuid.uuid4()),
            "session_id": SESSION,
            "agent_id": "bot",
            "trace_type": "thought",
            "content": {"step": i},
            "timestamp": f"2026-11-26T10:00:0{i}Z",
        }
        for i in range(3)
    ]
    r = ks.request("POST", "/v1/cot/ingest", json={"traces": traces})
    assert r.ok, r.text
    with psycopg.connect(ks.server.dsn, autocommit=True) as con:
        con.execute("CREATE TABLE acct (id INT PRIMARY KEY, bal INT)")
        con.execute("INSERT INTO acct VALUES (1, 10), (2, 20)")


TRUST: dict[str, str] = {}  # what the console said while the server had no keys


def shot(driver: webdriver.Chrome, shots: Path, name: str) -> None:
    path = shots / f"{name}.png"
    driver.save_screenshot(str(path))
    print(f"screenshot: {path}")


def sign_in(driver: webdriver.Chrome, ks: KeyedServer, key: str) -> None:
    driver.delete_all_cookies()
    driver.get(ks.url + "/console/signin")
    driver.find_element(By.ID, "api_key").send_keys(ks.secrets[key])
    click_through(driver, driver.find_element(By.CSS_SELECTOR, "form button[type=submit]"))


def gone(page: WebElement) -> bool:
    """The old page's root element left the document (chromium reports it as stale, or,
    mid-navigation, as a node that no longer belongs to the document)."""
    try:
        page.is_enabled()
    except WebDriverException:
        return True
    return False


def click_through(driver: webdriver.Chrome, element: WebElement) -> None:
    """Click a link or button and wait until the next page replaced this one."""
    page = driver.find_element(By.TAG_NAME, "html")
    element.click()
    WebDriverWait(driver, 10).until(lambda _: gone(page))


def text(driver: webdriver.Chrome, element_id: str) -> str:
    found = driver.find_elements(By.ID, element_id)
    assert found, f"no #{element_id} on {driver.current_url}:\n{driver.page_source[-3000:]}"
    return found[0].text


def result_texts(driver: webdriver.Chrome) -> list[str]:
    return [a.text for a in driver.find_elements(By.CSS_SELECTOR, "#results tbody a")]


def create_key(driver: webdriver.Chrome, ks: KeyedServer, name: str) -> str:
    """Create an organisation key on the keys page; its secret, shown once."""
    driver.get(ks.url + "/console/keys")
    driver.find_element(By.ID, "key-name").send_keys(name)
    click_through(driver, driver.find_element(By.ID, "create-key"))
    return text(driver, "new-secret")
