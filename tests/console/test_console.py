"""The web console (/console) in a real headless chromium against a real keyed server
holding memories of two agents and a reasoning session whose step 1 was edited in the
database file (the server stopped, the row changed, the server restarted); the server,
browser and helpers are in conftest.py and console_support.py."""

from __future__ import annotations

import uuid

import psycopg
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests.console.console_support import (
    SESSION,
    TRIGGER,
    TRUST,
    click_through,
    create_key,
    gone,
    result_texts,
    shot,
    sign_in,
    text,
)


def test_trust_mode_is_said_plainly(ks):
    assert TRUST["signin"].startswith("Trust mode:")
    assert TRUST["memories"].startswith("Trust mode:") and "unrestricted admin" in TRUST["memories"]
    assert TRUST["count"] == "3 memories, newest first"


def test_agent_key_sees_only_its_agent_and_gets_403_on_keys(ks, driver, shots):
    sign_in(driver, ks, "bot")
    assert driver.current_url.endswith("/console/memories")
    cookie = driver.get_cookie("hatiproxy_console")
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict"
    assert "agent bot" in text(driver, "identity")
    assert text(driver, "count") == "2 memories, newest first"
    assert "carol's private whale notes" not in driver.page_source
    box = driver.find_element(By.NAME, "q")
    box.send_keys("whale")
    page = driver.find_element(By.TAG_NAME, "html")
    box.submit()
    WebDriverWait(driver, 10).until(lambda _: gone(page))
    assert text(driver, "count") == "2 results for “whale”"
    assert set(result_texts(driver)) == {
        "the blue whale is the largest animal",
        "whale songs travel far under water",
    }
    headers = [th.text for th in driver.find_elements(By.CSS_SELECTOR, "#results th")]
    assert headers[:2] == ["Score", "Memory"]
    shot(driver, shots, "memories-search-agent")
    # Naming another agent in the filter is refused, not answered with its rows.
    driver.get(ks.url + "/console/memories?q=whale&agent=carol")
    assert text(driver, "status") == "403 Forbidden"
    assert "carol's private" not in driver.page_source
    driver.get(ks.url + "/console/keys")
    assert text(driver, "status") == "403 Forbidden"
    shot(driver, shots, "keys-403-agent")


def test_admin_filters_and_deletes_with_confirmation(ks, driver, shots):
    sign_in(driver, ks, "admin")
    assert text(driver, "count") == "3 memories, newest first"
    driver.get(ks.url + "/console/memories?q=whale&min_importance=0.5")
    assert text(driver, "count") == "2 results for “whale”"
    assert set(result_texts(driver)) == {
        "the blue whale is the largest animal",
        "carol's private whale notes",
    }
    # each hit's score parts (wide columns: read as text the layout may hide at phone width)
    ths = driver.find_elements(By.CSS_SELECTOR, "#results thead th")
    head = [th.get_attribute("textContent") for th in ths]
    assert {"Weighted", "Semantic", "Keyword", "Recency", "Importance", "Confidence"} <= set(head)
    cells = driver.find_elements(By.CSS_SELECTOR, "#results tbody tr:first-child td")
    parts = [c.get_attribute("textContent") for c in cells]
    assert 0.99 < float(parts[head.index("Recency")]) <= 1.0  # stored minutes ago
    assert 0 < float(parts[head.index("Weighted")]) <= 1.0
    click_through(driver, driver.find_element(By.LINK_TEXT, "carol's private whale notes"))
    assert text(driver, "content") == "carol's private whale notes"
    assert "no memory has replaced this one" in text(driver, "chain")
    click_through(driver, driver.find_element(By.ID, "delete"))
    shot(driver, shots, "memory-delete-confirm")
    click_through(driver, driver.find_element(By.ID, "confirm-delete"))
    assert text(driver, "count") == "2 memories, newest first"
    assert "carol's private whale notes" not in result_texts(driver)


def test_replay_highlights_first_broken_step(ks, driver, shots):
    sign_in(driver, ks, "bot")
    click_through(driver, driver.find_element(By.LINK_TEXT, "Reasoning sessions"))
    row = driver.find_element(By.XPATH, f"//tr[td/a[text()='{SESSION}']]")
    cells = [td.text for td in row.find_elements(By.TAG_NAME, "td")]
    assert cells[:4] == [SESSION, "bot", "3", "BROKEN"]
    click_through(driver, row.find_element(By.TAG_NAME, "a"))
    assert text(driver, "chain-status").startswith("Hash chain BROKEN at step 1")
    broken = driver.find_elements(By.CSS_SELECTOR, "#steps tr.broken")
    assert [r.get_attribute("id") for r in broken] == ["step-1"]
    assert "first broken step" in broken[0].text and '{"step": 99}' in broken[0].text
    shot(driver, shots, "replay-broken")


def test_admin_creates_key_secret_shown_once_then_revokes(ks, driver, shots):
    sign_in(driver, ks, "admin")
    secret = create_key(driver, ks, "console-made")
    assert secret.startswith("hd_live_")
    shot(driver, shots, "keys-created")
    # The secret works, and the page never shows it again.
    r = requests.get(ks.url + "/v1/whoami", headers={"Authorization": f"ApiKey {secret}"})
    assert r.status_code == 200, r.text
    driver.get(ks.url + "/console/keys")
    assert secret not in driver.page_source
    row = driver.find_element(By.XPATH, "//table[@id='org-keys']//tr[td='console-made']")
    assert "active" in row.text
    click_through(driver, row.find_element(By.TAG_NAME, "button"))
    row = driver.find_element(By.XPATH, "//table[@id='org-keys']//tr[td='console-made']")
    assert "revoked" in row.text
    r = requests.get(ks.url + "/v1/whoami", headers={"Authorization": f"ApiKey {secret}"})
    assert r.status_code == 401


def test_post_without_matching_csrf_token_is_403(ks):
    with requests.Session() as jar:
        r = jar.post(ks.url + "/console/signin", data={"api_key": ks.secrets["admin"]})
        assert r.ok and "Memories" in r.text
        r = jar.post(ks.url + "/console/keys", data={"csrf": "forged", "name": "x"})
        assert r.status_code == 403 and "CSRF" in r.text
        some = uuid.uuid4()
        for action in (
            "keys/k/rotate",
            "triggers/whales/test",
            f"memories/{some}/re-embed",
            "branches/b/merge",
            "branches/b/discard",
        ):
            r = jar.post(f"{ks.url}/console/{action}", data={"csrf": "forged", "text": "x"})
            assert r.status_code == 403 and "CSRF" in r.text, action
        page = jar.get(ks.url + "/console/keys").text
    assert ">x<" not in page  # no key was created
    r = requests.post(ks.url + "/console/signin", data={"api_key": "hd_live_wrong"})
    assert "That key was not accepted" in r.text and "<h1>Sign in</h1>" in r.text


def test_server_page_shows_metrics(ks, driver, shots):
    sign_in(driver, ks, "admin")
    click_through(driver, driver.find_element(By.LINK_TEXT, "Server"))
    assert int(text(driver, "connections")) >= 0
    assert int(text(driver, "queue")) >= 0
    assert text(driver, "cache").endswith("%")
    shot(driver, shots, "server")


def test_trigger_test_form_and_recent_fires(ks, driver, shots):
    sign_in(driver, ks, "admin")
    click_through(driver, driver.find_element(By.LINK_TEXT, "Triggers"))
    assert text(driver, "count") == "1 trigger"
    click_through(driver, driver.find_element(By.LINK_TEXT, "whales"))
    assert text(driver, "concept") == TRIGGER["concept"]
    for sample, verdict in ((TRIGGER["concept"], "would fire"), ("tax forms", "would not fire")):
        box = driver.find_element(By.ID, "test-text")
        box.clear()
        box.send_keys(sample)
        click_through(driver, driver.find_element(By.ID, "run-test"))
        result = text(driver, "test-result")
        assert result.endswith(f"threshold 0.9: {verdict}."), result
    assert result.startswith("Similarity ") and " < threshold" in result
    shot(driver, shots, "trigger-test")
    # bot's memory equal to the concept fired the org trigger once (embedding is async).
    url = f"/v1/organizations/local/triggers/{TRIGGER['name']}/fires"
    WebDriverWait(driver, 10, 0.1).until(lambda _: ks.request("GET", url, key="admin").json())
    driver.refresh()
    assert text(driver, "fires-count") == "1 recent fire"
    fire = driver.find_element(By.CSS_SELECTOR, "#fires tbody tr").text
    assert "1.000" in fire and TRIGGER["concept"] in fire


def test_agent_key_sees_no_org_trigger(ks, driver, shots):
    sign_in(driver, ks, "bot")
    driver.get(ks.url + "/console/triggers")
    assert text(driver, "count") == "0 triggers"
    driver.get(ks.url + "/console/triggers/whales")
    assert text(driver, "status") == "404 Not found"
    assert TRIGGER["concept"] not in driver.page_source
    shot(driver, shots, "trigger-404-agent")


def test_admin_rotates_key_and_sees_its_usage_agent_key_gets_403(ks, driver, shots):
    sign_in(driver, ks, "admin")
    old = create_key(driver, ks, "to-rotate")
    for _ in range(2):
        r = requests.get(ks.url + "/v1/whoami", headers={"Authorization": f"ApiKey {old}"})
        assert r.status_code == 200, r.text
    row = "//table[@id='org-keys']//tr[td='to-rotate']"
    click_through(driver, driver.find_element(By.XPATH, row + "//a[text()='Usage']"))
    usage_url = driver.current_url
    assert text(driver, "usage-rest") == "2" and text(driver, "usage-status") == "active"
    shot(driver, shots, "key-usage")
    driver.get(ks.url + "/console/keys")
    click_through(driver, driver.find_element(By.XPATH, row + "//button[text()='Rotate']"))
    new = text(driver, "rotated-secret")
    assert new.startswith("hd_live_") and new != old
    shot(driver, shots, "key-rotated")
    statuses = [
        tr.find_elements(By.TAG_NAME, "td")[3].text for tr in driver.find_elements(By.XPATH, row)
    ]
    assert sorted(statuses) == ["active", "revoked"]
    for secret, status in ((old, 401), (new, 200)):
        r = requests.get(ks.url + "/v1/whoami", headers={"Authorization": f"ApiKey {secret}"})
        assert r.status_code == status, r.text
    driver.refresh()  # a reload (GET /console/keys) never shows the secret again
    assert new not in driver.page_source
    sign_in(driver, ks, "bot")
    driver.get(usage_url)
    assert text(driver, "status") == "403 Forbidden"
    assert "usage-rest" not in driver.page_source


def test_memory_filters_by_embedding_and_time_and_reembeds_with_confirmation(ks, driver, shots):
    listing = "/v1/organizations/local/agent-memory?embedding_status=embedded"
    WebDriverWait(driver, 10, 0.1).until(
        lambda _: len(ks.request("GET", listing, key="admin").json()) == 2
    )
    sign_in(driver, ks, "admin")
    Select(driver.find_element(By.NAME, "status")).select_by_visible_text("failed")
    click_through(driver, driver.find_element(By.CSS_SELECTOR, "form[role=search] button"))
    assert (
        "status=failed" in driver.current_url
        and text(driver, "count") == "0 memories, newest first"
    )
    for query, count in (("status=embedded", 2), ("since=2099-01-01", 0), ("until=2000-01-01", 0)):
        driver.get(ks.url + "/console/memories?" + query)
        assert text(driver, "count") == f"{count} memories, newest first", query
    driver.get(ks.url + "/console/memories?since=2000-01-01&until=2099-12-31&status=embedded")
    assert len(result_texts(driver)) == 2
    shot(driver, shots, "memories-filtered")
    click_through(driver, driver.find_element(By.LINK_TEXT, TRIGGER["concept"]))
    assert text(driver, "embedding-status").startswith("embedded")
    page = driver.current_url
    click_through(driver, driver.find_element(By.ID, "reembed"))
    shot(driver, shots, "memory-reembed-confirm")
    confirm_url = driver.current_url
    click_through(driver, driver.find_element(By.ID, "confirm-reembed"))
    assert driver.current_url.startswith(page) and "queued=1" in driver.current_url
    assert text(driver, "reembed-queued").startswith("Queued")
    # An analyst (memory:read only) sees the page but re-embedding is refused.
    sign_in(driver, ks, "analyst")
    driver.get(confirm_url)
    click_through(driver, driver.find_element(By.ID, "confirm-reembed"))
    assert text(driver, "status") == "403 Forbidden"


BRANCHES = "/v1/organizations/local/branches"


def test_branch_diff_then_merge_with_confirmation_agent_sees_only_its_own(ks, driver, shots):
    made = {}
    for agent in ("bot", "carol"):
        body = {"agent_id": agent, "tables": ["acct"], "name": f"{agent}-whatif"}
        r = ks.request("POST", BRANCHES, key="admin", json=body)
        assert r.ok, r.text
        made[agent] = r.json()["id"]
    dsn = f"host=127.0.0.1 port={ks.server.port} user=bot dbname=hatidata"
    with psycopg.connect(dsn, password=ks.secrets["bot"], autocommit=True) as con:
        sql = "INSERT INTO acct VALUES (3, 30)"
        con.execute("SELECT * FROM branch_query(%s, %s)", [made["bot"], sql]).fetchall()
    sign_in(driver, ks, "bot")
    click_through(driver, driver.find_element(By.LINK_TEXT, "Branches"))
    assert text(driver, "count") == "1 branch"
    assert "carol-whatif" not in driver.page_source
    click_through(driver, driver.find_element(By.LINK_TEXT, "bot-whatif"))
    assert text(driver, "diff-summary") == "1 added, 0 removed, 0 changed in the branch"
    assert text(driver, "conflicts") == "No conflicts with main"
    click_through(driver, driver.find_element(By.ID, "merge"))
    shot(driver, shots, "branch-merge-confirm")
    click_through(driver, driver.find_element(By.ID, "confirm-merge"))
    assert text(driver, "branch-status") == "merged"
    assert "merged" in text(driver, "audit")
    shot(driver, shots, "branch-merged")
    driver.get(f"{ks.url}/console/branches/{made['carol']}")
    assert text(driver, "status") == "404 Not found" and "carol-whatif" not in driver.page_source
    sign_in(driver, ks, "admin")
    driver.get(f"{ks.url}/console/branches/{made['carol']}?confirm=discard")
    click_through(driver, driver.find_element(By.ID, "confirm-discard"))
    assert text(driver, "branch-status") == "discarded"


INBOX = "/v1/organizations/local/inbox"


def test_inbox_shows_own_notifications_and_acknowledges(ks, driver, shots):
    notify = {**TRIGGER, "name": "bot-notes", "concept": "krill", "actions": ["agent_notify"]}
    r = ks.request("POST", "/v1/organizations/local/triggers", key="bot", json=notify)
    assert r.ok, r.text
    body = {"agent_id": "bot", "memory_type": "fact", "content": "krill", "importance": 0.5}
    r = ks.request("POST", "/v1/organizations/local/agent-memory", key="bot", json=body)
    assert r.ok, r.text
    WebDriverWait(driver, 10, 0.1).until(lambda _: ks.request("GET", INBOX, key="bot").json())
    assert ks.request("GET", INBOX, key="admin").json() == []  # another agent's inbox
    sign_in(driver, ks, "bot")
    click_through(driver, driver.find_element(By.LINK_TEXT, "Triggers"))
    assert text(driver, "inbox-count") == "1 notification, 1 unread"
    row = driver.find_element(By.CSS_SELECTOR, "#inbox-list tbody tr.unread").text
    assert "bot-notes" in row and "krill" in driver.page_source
    shot(driver, shots, "inbox-unread")
    click_through(driver, driver.find_element(By.ID, "inbox-ack"))
    assert text(driver, "inbox-count") == "1 notification, 0 unread"
    assert ks.request("GET", INBOX, key="bot", params={"unread_only": "true"}).json() == []
    shot(driver, shots, "inbox-read")


def test_replay_shows_approvals_and_exports_the_chain(ks, driver, shots):
    approval = {"session_id": SESSION, "agent_id": "bot", "decision": "reject", "reason": "edited"}
    r = ks.request("POST", "/v1/cot/approvals", key="admin", json=approval)
    assert r.ok, r.text
    sign_in(driver, ks, "bot")
    driver.get(f"{ks.url}/console/sessions/{SESSION}")
    assert text(driver, "approvals-count") == "1 approval"
    row = driver.find_element(By.CSS_SELECTOR, "#approvals tbody tr").text
    assert "reject" in row and "session" in row
    shot(driver, shots, "replay-approvals")
    href = driver.find_element(By.ID, "export").get_attribute("href")
    cookies = {c["name"]: c["value"] for c in driver.get_cookies()}
    got = requests.get(href, cookies=cookies, timeout=30)
    assert got.ok and "attachment" in got.headers["content-disposition"]
    doc = got.json()
    assert doc["approvals"][0]["decision"] == "reject"
    assert len(doc["steps"]) == 3 and doc["verification"]["chain_valid"] is False


def test_admin_records_session_and_merge_decisions_agent_key_sees_no_form(ks, driver, shots):
    r = ks.request("POST", BRANCHES, key="admin", json={"agent_id": "bot", "tables": ["acct"],
                   "name": "bot-review"})  # fmt: skip
    assert r.ok, r.text
    branch = r.json()["id"]
    sign_in(driver, ks, "bot")  # an agent key: no decision forms (the routes need admin)
    driver.get(f"{ks.url}/console/sessions/{SESSION}")
    before = int(text(driver, "approvals-count").split()[0])
    assert not driver.find_elements(By.ID, "approve-form")
    driver.get(f"{ks.url}/console/branches/{branch}")
    assert not driver.find_elements(By.ID, "approval-form")
    driver.get(f"{ks.url}/console/branches/{branch}?confirm=discard")  # lends a CSRF token
    csrf = driver.find_element(By.NAME, "csrf").get_attribute("value")
    post = """const f = document.createElement('form'); f.method = 'post'; f.action = arguments[0];
        for (const [k, v] of Object.entries(arguments[1])) { const i = document.createElement('input');
        i.name = k; i.value = v; f.appendChild(i); } document.body.appendChild(f); f.submit();"""
    page = driver.find_element(By.TAG_NAME, "html")
    fields = {"csrf": csrf, "agent": "bot", "decision": "approve"}
    driver.execute_script(post, f"/console/sessions/{SESSION}/approve", fields)
    WebDriverWait(driver, 10).until(lambda _: gone(page))
    assert text(driver, "status").startswith("403")  # the forged POST is refused

    sign_in(driver, ks, "admin")
    driver.get(f"{ks.url}/console/sessions/{SESSION}?agent=bot")
    driver.find_element(By.CSS_SELECTOR, "#approve-form input[value=approve]").click()
    driver.find_element(By.CSS_SELECTOR, "#approve-form input[name=reason]").send_keys("checked")
    click_through(driver, driver.find_element(By.ID, "record-approval"))
    assert int(text(driver, "approvals-count").split()[0]) == before + 1
    rows = driver.find_element(By.ID, "approvals").get_attribute("textContent")  # reason:
    assert "approve" in rows and "checked" in rows  # a wide column, hidden at phone width

    driver.get(f"{ks.url}/console/branches/{branch}")
    form = driver.find_element(By.ID, "approval-form")
    form.find_element(By.NAME, "session_id").send_keys(SESSION)
    form.find_element(By.CSS_SELECTOR, "input[value=reject]").click()
    form.find_element(By.NAME, "reason").send_keys("numbers unchecked")
    click_through(driver, driver.find_element(By.ID, "record-merge-decision"))
    assert text(driver, "approval").startswith("reject by ")
    assert "numbers unchecked" in text(driver, "approval")
    shot(driver, shots, "branch-merge-rejected")
    click_through(driver, driver.find_element(By.ID, "merge"))
    click_through(driver, driver.find_element(By.ID, "confirm-merge"))
    assert text(driver, "status").startswith("409"), driver.page_source[-2000:]
    assert "rejected" in driver.page_source
    # the decision is in the reasoning session's ledger too
    driver.get(f"{ks.url}/console/sessions/{SESSION}?agent=bot")
    assert int(text(driver, "approvals-count").split()[0]) == before + 2
