"""Every word for people (issue 51, item 6): a walk of every page a person reaches (anonymous,
a user, staff; headless Chromium at 1280 px, what the page shows once its scripts ran), of the
API's errors and of the ``arena`` commands a user runs, against the shared server
(``arena_site``, tests/e2e/conftest.py), finding no raw code, slug, Python literal (``None``,
``True``, ``False``, braces, ``['...']``), ``null``, ``undefined``, ``NaN`` nor doubled word
("ended ended") in what a person reads.

The codes looked for come from the catalogues themselves, never typed in here: every end
reason of every game (``Game.reasons``, ``games.base.COMMON_REASONS``), every illegal reply's
code (``Game.illegal``), every fault code (``bots.faults.FaultCode``) and every status, kind
and format code of the models (every ``TextChoices`` of ``competition.models``). A code that
is an ordinary word ("finished", "timeout", "occupied") cannot be told from prose, so text is
searched for the codes that are no word ("board_full", "bad_json", "tictactoe", "builtin",
"dns") and every status badge (``.status``, ``.badge``) is checked to show no code at all.
What is shown as code is left out: ``pre``, ``code`` and ``.mono`` (a message a bot received,
a file name, a hash), and the messages the CLI prints after ``sent:`` and ``reply:``.

The world is made once for the module: a user with an HTTP bot that answers an illegal move,
one whose port is closed, built-in bots in a finished round robin and knockout, an uploaded
code bot, an event open for entries and one being prepared; a user with no bot; staff.
Screenshots at 1920x1080 and 390x844 (``screenshots/words-*``): the home page, My bots
empty, a code bot's page and a log page, none wider than its window.
"""

from __future__ import annotations

import http.server
import importlib
import inspect
import json
import pkgutil
import re
import threading
import time

import pytest
import requests
from django.db import models
from playwright import sync_api as playwright_api

import competition.models as competition_models
from bots.faults import FaultCode
from games import all_games
from games.base import COMMON_REASONS
from tests.conftest import REPO, free_port
from tests.e2e.conftest import ARGS, CHROMIUM, PHONE, PROJECTOR, SHOTS, shell, shot
from tests.processes import arena

pytestmark = [pytest.mark.xdist_group("arena_site"), pytest.mark.slow]  # the shared server

PASSWORD = "words-pass-123"
WIDE = {"width": 1280, "height": 900}
STARTER = REPO / "games" / "tictactoe" / "starter_bot.py"


# -- what is looked for, from the catalogues ---------------------------------------------------


def catalogue_codes() -> dict[str, str]:
    """Every internal code a person might be shown raw: code -> where it comes from."""
    codes: dict[str, str] = {}
    for info in pkgutil.iter_modules(competition_models.__path__):
        module = importlib.import_module(f"competition.models.{info.name}")
        for name, choices in vars(module).items():
            if (
                inspect.isclass(choices)
                and issubclass(choices, models.TextChoices)
                and choices.__module__ == module.__name__
            ):
                codes.update({c.value: name for c in choices})
    codes.update({c.value: "FaultCode" for c in FaultCode})
    codes.update({code: "COMMON_REASONS" for code in COMMON_REASONS})
    for game in all_games():
        codes.update({code: f"{game.slug} reasons" for code in game.reasons})
        codes.update({code: f"{game.slug} illegal" for code in game.illegal})
    return codes


def identifiers() -> dict[str, str]:
    """The codes that are no word of prose, so never to be read anywhere: underscored codes,
    the slugs that are not a word of their game's title, a label run together ("builtin"
    for "Built-in strategy", "tictactoe"), lower-case acronyms without a vowel ("dns")."""
    found = {}
    labels = {}
    for info in pkgutil.iter_modules(competition_models.__path__):
        module = importlib.import_module(f"competition.models.{info.name}")
        for choices in vars(module).values():
            if inspect.isclass(choices) and issubclass(choices, models.TextChoices):
                labels.update({c.value: str(c.label) for c in choices})
    for code, source in catalogue_codes().items():
        run_together = re.sub(r"[^a-z]", "", labels.get(code, "").lower())
        if (
            "_" in code
            or not re.search("[aeiouy]", code)
            or (len(code) > 3 and code in run_together and code not in labels[code].lower())
        ):
            found[code] = source
    for game in all_games():
        if game.slug not in re.findall(r"[a-z]+", game.title.lower()):
            found[game.slug] = "a game's slug"
    return found


IDENTIFIERS = identifiers()
ALL_CODES = catalogue_codes()


def _code_pattern(code: str) -> re.Pattern:
    # a whole token, not part of a path, a URL, an address or a file name
    flags = 0 if not re.search("[aeiouy]", code) else re.IGNORECASE
    return re.compile(rf"(?<![\w/.#@:-]){re.escape(code)}(?![\w/]|://|s://|\.\w)", flags)


PATTERNS = [
    (f"the code {code!r} ({src})", _code_pattern(code)) for code, src in IDENTIFIERS.items()
]
PATTERNS += [
    # (a literal alone: "None available", Django's English, is a sentence)
    ("a Python literal", re.compile(r"\b(None|True|False)\b(?! [a-z])")),
    ("a brace", re.compile(r"[{}]")),
    ("a Python list", re.compile(r"\[\s*'|'\s*\]")),
    ("a JavaScript literal", re.compile(r"\b(null|undefined|NaN)\b")),
    ("a doubled word", re.compile(r"\b([A-Za-z]{2,}) (\1)\b", re.IGNORECASE)),
]


def meant(what: str, hit: re.Match) -> bool:
    """Whether a hit is one: a doubled word written once in capitals is an option's value
    ("--days DAYS"), not a word said twice."""
    if what == "a doubled word":
        first, second = hit.group(1), hit.group(2)
        return not (second.isupper() and not first.isupper())
    return True


def problems(text: str, where: str) -> list[str]:
    found = []
    for line in text.splitlines():
        for what, pattern in PATTERNS:
            if any(meant(what, hit) for hit in pattern.finditer(line)):
                found.append(f"{where}: {what} in {line.strip()[:200]!r}")
    return found


def badge_problems(badges: list[str], where: str) -> list[str]:
    """A status badge shows words, never a code of the catalogues (their label would)."""
    return [
        f"{where}: the badge {text!r} is a code ({ALL_CODES[text.strip()]})"
        for text in badges
        if text.strip() in ALL_CODES and text.strip() != "ok"
    ]


#: what a person reads on the page: the rendered text without what is shown as code, the
#: document's title, the tooltips; and the status badges' texts apart
READ = """() => {
  const hidden = [];
  for (const el of document.querySelectorAll('pre, code, .mono, script, style, textarea')) {
    hidden.push([el, el.style.display]);
    el.style.display = 'none';
  }
  const text = document.body.innerText;
  for (const [el, display] of hidden) el.style.display = display;
  const tips = [...document.querySelectorAll('[title]')].map((el) => el.title);
  const badges = [...document.querySelectorAll('.status, .badge')].map((el) => el.innerText);
  return {text: [document.title, text, ...tips].join('\\n'), badges};
}"""


# -- the world ---------------------------------------------------------------------------------


class Illegal(http.server.BaseHTTPRequestHandler):
    """A tic-tac-toe bot whose every reply names no cell of the board (illegal: bad_cell)."""

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = b'{"play": "z9"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(autouse=True)
def _close_egress_session():
    """Overrides the conftest's async fixture (Playwright's sync API owns this thread's loop)."""
    yield


@pytest.fixture(scope="module")
def illegal_bot():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Illegal)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


SETUP = """
import json
from datetime import timedelta
from django.contrib.auth import get_user_model
from django.utils import timezone
from competition.bots.services import create_bot, platform_seat
from competition.events.services import start_event
from competition.matches.lifecycle import create_match
from competition.models import Entry, Event
from competition.models.accounts import ApiToken
from competition.models.bots import EndpointKind
User = get_user_model()
ann = User.objects.create_user("words-ann", email="ann@example.test", password={password!r})
User.objects.create_user("words-new", password={password!r})
User.objects.create_superuser("words-staff", email="staff@example.test", password={password!r})
token = ApiToken.objects.issue(ann, "words")[1]
illegal = create_bot(owner=ann, game="tictactoe", name="words-illegal", kind="http",
                     target={illegal!r})
closed = create_bot(owner=ann, game="tictactoe", name="words-closed", kind="http",
                    target={closed!r})
house = platform_seat("tictactoe", EndpointKind.BUILTIN, "random")
matches = [create_match("tictactoe", [b, house], created_by=ann).pk for b in (illegal, closed)]
now = timezone.now()
events = {{}}
for name, fmt, n in (("Words round cup", "round_robin", 3),
                     ("Words knockout", "single_elimination", 4)):
    e = Event.objects.create(name=name, game="tictactoe", format=fmt, created_by=ann)
    for i in range(1, n + 1):
        bot = create_bot(owner=ann, game="tictactoe", name=f"words-{{e.pk}}-{{i}}",
                         kind="builtin", target="random")
        Entry.objects.create(event=e, bot=bot, seed=i)
    start_event(e)
    events[name] = e.pk
events["open"] = Event.objects.create(
    name="Words open cup", game="tictactoe", created_by=ann,
    registration_opens=now - timedelta(hours=1), registration_closes=now + timedelta(days=1),
).pk
events["later"] = Event.objects.create(name="Words later cup", game="tictactoe").pk
from competition.notifications import notify
notify.flush()  # the console mail backend's output first (a thread): the JSON line is the last
print(json.dumps({{"token": token, "illegal": illegal.pk, "closed": closed.pk,
                  "matches": matches, "events": events}}))
"""


def wait_until(check, what: str, timeout: float = 180.0):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"{what}: not within {timeout:g} s"
        time.sleep(0.5)


@pytest.fixture(scope="module")
def world(arena_site, illegal_bot, tmp_path_factory) -> dict:
    """The module's users, bots, matches and events, every match over (see the docstring)."""
    closed = f"http://127.0.0.1:{free_port()}/"
    said = shell(arena_site, SETUP.format(password=PASSWORD, illegal=illegal_bot, closed=closed))
    made = json.loads(said[said.index("{") :])  # after what the console's mail backend printed
    base = arena_site["base"]
    home = tmp_path_factory.mktemp("words-cli")
    done = arena(home, "--server", base, "login", "--token", made["token"])
    assert done.returncode == 0, done.stderr
    registered = arena(home, "register", "tictactoe", "words-code", str(STARTER), "--kind", "code")
    assert registered.returncode == 0, registered.stderr
    made["code"] = int(re.search(r"registered bot (\d+)", registered.stdout).group(1))
    for match in made["matches"]:
        url = f"{base}/api/matches/{match}/"
        wait_until(
            lambda url=url: (
                requests.get(url, timeout=10).json()["status"] not in ("queued", "running")
            ),
            f"{url} ended",
        )
    for name in ("Words round cup", "Words knockout"):
        url = f"{base}/api/events/{made['events'][name]}/"
        wait_until(
            lambda url=url: requests.get(url, timeout=10).json()["status"] == "finished",
            f"{name} finished",
        )
    made.update(base=base, home=home, closed_url=closed)
    return made


@pytest.fixture(scope="module")
def browser():
    SHOTS.mkdir(exist_ok=True)
    with playwright_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


def signed_in(browser, base: str, name: str | None, viewport=WIDE):
    context = browser.new_context(viewport=viewport)
    context.set_default_timeout(30_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"{page.url}: {exc}"))
    if name:
        page.goto(base + "/accounts/login/")
        page.fill("input[name=username]", name)
        page.fill("input[name=password]", PASSWORD)
        page.locator("form [type=submit]").last.click()
        page.wait_for_load_state()
        assert "/accounts/login/" not in page.url, f"{name} could not sign in"
    return page, errors


def read(page, url: str, ready: str | None = None) -> tuple[str, list[str]]:
    page.goto(url)
    page.wait_for_load_state("load")
    if ready:
        page.wait_for_function(ready, timeout=60_000)
    seen = page.evaluate(READ)
    return seen["text"], seen["badges"]


#: the viewer has drawn the match's end and its turn table
VIEWER_READY = (
    "() => document.body.dataset.matchDone === '1' && "
    "document.querySelector('#turn-info table, #turn-info p') !== null"
)


def public_pages(world: dict) -> list[tuple[str, str | None]]:
    events = world["events"]
    illegal, closed = world["matches"]
    pages = [("/", None), ("/matches/", None), ("/events/", None), ("/docs/", None)]
    pages += [("/docs/languages/", None), ("/no-such-page/", None), ("/accounts/login/", None)]
    pages += [("/accounts/signup/", None), ("/users/words-ann/", None)]
    for game in all_games():
        pages += [(f"/games/{game.slug}/", None), (f"/games/{game.slug}/leaderboard", None)]
        pages += [(f"/docs/{game.slug}/", None), (f"/games/{game.slug}/seasons/", None)]
    for event in events.values():
        pages.append((f"/events/{event}/", None))
    over = events["Words round cup"]
    pages.append((f"/events/{over}/screen", "() => document.body.dataset.mode !== undefined"))
    pages.append((f"/matches/{illegal}/?turn=1", VIEWER_READY))
    pages.append((f"/matches/{closed}/", VIEWER_READY))
    pages += [(f"/bots/{world['illegal']}/", None), (f"/bots/{world['code']}/", None)]
    return pages


def user_pages(world: dict) -> list[tuple[str, str | None]]:
    illegal, closed = world["matches"]
    pages = [("/", None), ("/bots/", None), ("/bots/new/", None), ("/bots/new/?kind=code", None)]
    pages += [("/notifications/", None), ("/accounts/profile/", None), ("/challenges/", None)]
    pages += [("/bench/", None), ("/games/tictactoe/play", None)]
    pages += [(f"/events/{world['events']['open']}/", None)]
    for bot in (world["illegal"], world["closed"], world["code"]):
        pages += [(f"/bots/{bot}/", None), (f"/bots/{bot}/edit/", None)]
    pages += [(f"/bots/{world['illegal']}/matches/{illegal}/log", None)]
    pages += [(f"/bots/{world['closed']}/matches/{closed}/log", None)]
    pages += [(f"/bots/{world['illegal']}/vs/{world['closed']}/", None)]
    pages += [(f"/matches/{illegal}/?turn=1", VIEWER_READY)]
    return pages


def staff_pages(world: dict) -> list[tuple[str, str | None]]:
    events = world["events"]
    pages = [("/admin/", None), ("/admin/competition/event/", None)]
    pages += [("/admin/competition/bot/", None), ("/admin/competition/match/", None)]
    pages += [(f"/admin/competition/event/{e}/change/", None) for e in events.values()]
    pages += [(f"/events/{events['Words knockout']}/present", None)]
    return pages


def test_it_shows_no_code_literal_or_doubled_word_on_any_page(world, browser):
    base, found, errors = world["base"], [], []
    walks = (
        (None, public_pages(world)),
        ("words-ann", user_pages(world)),
        ("words-new", [("/bots/", None), ("/", None)]),
        ("words-staff", staff_pages(world)),
    )
    # It should find the catalogues' codes to look for (a catalogue left empty would hide).
    assert {"board_full", "bad_cell", "bad_json", "round_robin", "tictactoe"} <= set(IDENTIFIERS)
    walked = 0
    for who, pages in walks:
        page, thrown = signed_in(browser, base, who)
        for path, ready in pages:
            text, badges = read(page, base + path, ready)
            where = f"{who or 'anonymous'} {path}"
            found += problems(text, where) + badge_problems(badges, where)
            walked += 1
        errors += thrown
        page.context.close()
    # It should read every page in words: no code, literal or doubled word anywhere.
    assert found == [], "\n".join(found)
    assert errors == []
    assert walked >= 60


def test_it_says_an_illegal_reply_in_the_games_words_in_the_viewer_and_the_log(world, browser):
    base = world["base"]
    illegal, _closed = world["matches"]
    page, errors = signed_in(browser, base, "words-ann")
    read(page, f"{base}/matches/{illegal}/?turn=1", VIEWER_READY)
    rows = page.locator("#turn-info table tr").all_inner_texts()
    # It should say the illegal reply with the game's own words, and no move as "no move".
    words = next(g for g in all_games() if g.slug == "tictactoe").illegal["bad_cell"]
    assert any("no move" in row and words in row for row in rows), rows
    text, _ = read(page, f"{base}/bots/{world['illegal']}/matches/{illegal}/log")
    # It should give the owner's log the same reason, the fault in words on its badge.
    assert words in text and "Made an illegal move" in text, text[:2000]
    assert errors == []
    page.context.close()


def test_it_shows_the_pages_in_words_on_a_phone_and_a_wall(world, browser):
    base = world["base"]
    illegal, _closed = world["matches"]
    shots = (
        ("words-new", "/bots/", "words-my-bots-empty"),
        ("words-new", "/", "words-home"),
        ("words-ann", f"/bots/{world['code']}/", "words-code-bot"),
        ("words-ann", f"/bots/{world['illegal']}/matches/{illegal}/log", "words-log"),
    )
    for viewport in (PROJECTOR, PHONE):
        for who, path, name in shots:
            page, errors = signed_in(browser, base, who, viewport)
            page.goto(base + path)
            page.wait_for_load_state("load")
            # It should offer uploading code first where a newcomer starts.
            if path in ("/", "/bots/") and who == "words-new":
                first = page.locator("main a.btn.primary, .hero a.btn.primary").first
                assert first.get_attribute("href").endswith("?kind=code"), path
            # It should fit the window (a long hash wraps), as the screenshot shows.
            shot(page, name)
            assert errors == []
            page.context.close()


# -- the API's errors ----------------------------------------------------------------------------


def strings(value) -> list[str]:
    """Every string a person might read in a JSON error body (its values, not its keys)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def test_it_gives_every_api_error_in_sentences(world):
    base, token = world["base"], world["token"]
    mine = {"Authorization": f"Token {token}"}
    events = world["events"]
    calls = [
        ("GET", "/api/matches/99999999/", None, None),
        ("GET", "/api/bots/99999999/", None, None),
        ("GET", "/api/events/99999999/", None, None),
        ("POST", "/api/bots/", None, {"name": "x"}),
        ("GET", "/api/me/", None, None),
        ("POST", "/api/bots/", mine, {}),
        (
            "POST",
            "/api/bots/",
            mine,
            {"game": "nope", "name": "", "kind": "http", "target": "ftp:"},
        ),
        ("POST", "/api/bots/", mine, {"game": "tictactoe", "name": "x", "kind": "builtin"}),
        ("PATCH", f"/api/bots/{world['illegal']}/", mine, {"status": "bogus"}),
        ("POST", f"/api/events/{events['later']}/enter/", mine, {"bot": world["illegal"]}),
        ("POST", f"/api/events/{events['open']}/enter/", mine, {"bot": 99999999}),
        ("POST", f"/api/events/{events['open']}/enter/", mine, {}),
        ("POST", "/api/matches/challenge/", mine, {"game": "tictactoe", "bots": [99999999]}),
        ("POST", "/api/matches/challenge/", mine, {"game": "nope", "bots": "x", "seed": "y"}),
        ("GET", "/api/matches/?status=bogus", None, None),
        ("POST", "/api/tokens/", mine, {"name": ["x"]}),
        ("DELETE", "/api/tokens/99999999/", mine, None),
        ("POST", f"/api/bots/{world['closed']}/test/", mine, None),
        ("POST", f"/api/bots/{world['closed']}/test/", mine, None),  # too soon: throttled
    ]
    found, statuses = [], []
    for method, path, headers, body in calls:
        response = requests.request(method, base + path, headers=headers, json=body, timeout=30)
        statuses.append(response.status_code)
        said = strings(response.json())
        if response.status_code < 300:  # the test call's answer: its words, not its codes
            said = [response.json()[k] for k in ("headline", "message", "summary")]
        for text in said:
            found += problems(text, f"{method} {path} ({response.status_code})")
            # It should say each as a sentence: a capital first (or a name), a stop last.
            if response.status_code >= 300 and not re.search(r"[.!?)]$", text.strip()):
                found.append(f"{method} {path}: not a sentence: {text!r}")
    # A filter's refusal names the values to type, the games' slugs included, by design
    # (tests/competition/models/test_match_list.py): it is said as a sentence all the same.
    refused = requests.get(base + "/api/matches/?game=nope", timeout=30)
    assert refused.status_code == 400 and refused.json()["game"][0].endswith(".")
    # It should have met the errors it was walked for: none of these succeeded but the first
    # test call (its answer a fault), the second throttled.
    assert statuses[-1] == 429 and statuses[-2] == 200, statuses
    assert all(code >= 400 for code in statuses[:-2]), statuses
    assert found == [], "\n".join(found)


# -- the arena commands ----------------------------------------------------------------------------


def cli_problems(done, where: str) -> list[str]:
    lines = []
    for line in (done.stdout + "\n" + done.stderr).splitlines():
        if line.startswith(("sent: ", "reply: ")):  # the messages themselves, shown as code
            continue
        lines.append(line)
    found = problems("\n".join(lines), where)
    if "Traceback" in done.stderr:
        found.append(f"{where}: a traceback")
    return found


def test_it_prints_every_cli_command_and_error_in_words(world):
    home, events = world["home"], world["events"]
    illegal, closed = world["matches"]
    over = events["Words round cup"]
    runs = {
        "whoami": [],
        "bots": ["--mine"],
        "bot": [str(world["illegal"])],
        "languages": [],
        "versions": [str(world["code"])],
        "matches": ["--bot", str(world["illegal"])],
        "match": [str(illegal)],
        "match-closed": [str(closed)],
        "watch": [str(illegal)],
        "events": [],
        "event": [str(over)],
        "event-knockout": [str(events["Words knockout"])],
        "notifications": [],
        "challenges": [],
        "token": [],
        "test": [str(world["illegal"])],
        "enter": [str(events["later"]), str(world["illegal"])],
        "enter-twice": [str(events["open"]), "99999999"],
        "register": ["tictactoe", "", "ftp://nowhere"],
        "challenge": ["tictactoe", "99999999"],
        "vs": [str(world["illegal"]), str(world["closed"])],
        "resume": [str(world["illegal"])],
        "report": [str(world["code"]), "1"],
        "match-missing": ["99999999"],
    }
    found, codes = [], {}
    for name, args in runs.items():
        command = name.split("-")[0]
        done = arena(home, command, *args)
        codes[name] = done.returncode
        found += cli_problems(done, f"arena {command} {' '.join(args)}")
    down = f"http://127.0.0.1:{free_port()}"
    unreachable = arena(home, "--server", down, "games")
    found += cli_problems(unreachable, "arena games (server down)")
    # It should say a closed port in words, and an error of no field as the sentence alone.
    assert unreachable.stderr.strip() == f"arena: Could not connect to {down}: connection refused."
    entered = arena(home, "enter", str(events["later"]), str(world["illegal"]))
    assert entered.stderr.strip() == "arena: Registration for this event is not open."
    # It should have run the commands that succeed, and failed the others with a message.
    assert codes["whoami"] == codes["bots"] == codes["match"] == codes["event"] == 0, codes
    assert codes["enter"] == codes["register"] == codes["match-missing"] == 1, codes
    assert found == [], "\n".join(found)
    # It should say the test call of a closed port in words, never aiohttp's text (once the
    # bot's test-call slot is free: the API's walk took it).
    closed_test = wait_until(
        lambda: (
            (done := arena(home, "test", str(world["closed"])))
            and "Too many requests" not in done.stderr
            and done
        ),
        "a test call of the closed port",
    )
    said = closed_test.stdout + closed_test.stderr
    assert "connection refused" in said and "Connect call failed" not in said, said
    assert world["closed_url"] in said
