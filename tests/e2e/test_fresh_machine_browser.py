"""``make run`` on a fresh machine without bubblewrap, as root (issue 52, item 7): it installs
bubblewrap with Debian's apt-get, serves, and a code bot uploaded in the browser passes its test
call.

The machine is left as it is: the test runs ``make run`` in a mount namespace of its own, where
``/usr``, dpkg's database and apt's lists and cache are overlays on temporary folders. There,
``/usr/bin/bwrap`` is hidden (an overlay whiteout) and dpkg's record of bubblewrap removed, as
on a machine that never had it; what apt-get installs goes to the overlays and vanishes with
the namespace. The package comes from the Debian mirror, as ``make test``'s own do.
"""

from __future__ import annotations

import os
import re

import pytest
from playwright import sync_api as playwright_api

from tests.conftest import REPO, free_port
from tests.e2e.conftest import ARGS, CHROMIUM, SHOTS, sign_up
from tests.processes import project_env, running

PASSWORD = "fresh-pass-phrase-42"
STARTER = REPO / "games" / "tictactoe" / "starter_bot.py"

#: run in the namespace (``unshare -m``, in a session of its own): the overlays, bubblewrap
#: forgotten, then ``make run``; a TERM stops the whole session (make passes on no signal)
FRESH = r"""
set -euo pipefail
scratch=$1 port=$2
for part in usr dpkg aptlib aptcache; do mkdir -p "$scratch/$part-up" "$scratch/$part-work"; done
mkdir -p "$scratch/usr-up/bin"
mknod "$scratch/usr-up/bin/bwrap" c 0 0  # (a whiteout: no bwrap in /usr/bin)
layer() { mount -t overlay overlay -o "lowerdir=$2,upperdir=$scratch/$1-up,workdir=$scratch/$1-work" "$2"; }
layer usr /usr
layer dpkg /var/lib/dpkg
layer aptlib /var/lib/apt
layer aptcache /var/cache/apt
python3 - <<'PY'
path = "/var/lib/dpkg/status"
stanzas = open(path).read().split("\n\n")
kept = [s for s in stanzas if not s.startswith("Package: bubblewrap\n")]
open(path, "w").write("\n\n".join(kept))
PY
rm -f /var/lib/dpkg/info/bubblewrap.*
if command -v bwrap || dpkg -s bubblewrap >/dev/null 2>&1; then
  echo "fresh machine: bubblewrap is still here" >&2; exit 3
fi
echo "fresh machine: no bubblewrap"
trap 'trap "" TERM; kill -TERM 0; wait; exit 143' TERM
make run PORT="$port" &
wait $!
"""


@pytest.fixture(autouse=True)
def _close_egress_session():
    """Overrides the conftest's async fixture (Playwright's sync API owns this thread's loop)."""
    yield


@pytest.fixture(scope="module")
def fresh_site(tmp_path_factory):
    assert os.geteuid() == 0, "this test runs as root (as CI does): it mounts overlays"
    scratch = tmp_path_factory.mktemp("fresh-machine")
    (scratch / "fresh.sh").write_text(FRESH)
    port = free_port()
    log = scratch / "make-run.log"
    argv = ["setsid", "unshare", "--mount", "--propagation", "private", "--"]
    argv += ["bash", str(scratch / "fresh.sh"), str(scratch / "layers"), str(port)]
    env = project_env(ARENA_DATA_DIR=str(scratch / "var"))
    # (apt-get update and install, then a fresh database's migrations: well within the wait)
    with running(argv, port, env=env, log=log, fresh=True):
        yield {"base": f"http://127.0.0.1:{port}", "log": log}


def test_make_run_installs_bubblewrap_and_an_uploaded_bot_passes_its_test_call(fresh_site):
    said = fresh_site["log"].read_text()
    # It should have begun without bubblewrap, installed it, and served.
    assert "fresh machine: no bubblewrap" in said, said[-3000:]
    assert "installing system packages: bubblewrap" in said, said[-3000:]
    assert "cannot run until" not in said, said[-3000:]
    SHOTS.mkdir(exist_ok=True)
    errors: list[str] = []
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        page.set_default_timeout(30_000)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        base = fresh_site["base"]
        sign_up(page, base, "newcomer", PASSWORD)
        page.goto(base + "/bots/new/")
        # It should offer uploading code (the sandbox works here now).
        assert page.locator("input[name=kind][value=code]").is_enabled()
        page.select_option("#id_game", "tictactoe")
        page.fill("#id_name", "fresh-starter")
        page.check("input[name=kind][value=code]")
        page.set_input_files("#id_file", str(STARTER))
        page.click("#bot-form button[type=submit]")
        page.wait_for_url(re.compile(r".*/bots/\d+/$"))
        # It should pass its test call, played in the sandbox bubblewrap was installed for.
        page.click("#test-call")
        page.wait_for_selector("#test-result")
        result = page.inner_text("#test-result")
        page.screenshot(path=str(SHOTS / "fresh-machine-test-call.png"), full_page=True)
        assert page.locator("#test-result.good").count() == 1, result
        browser.close()
    assert errors == []
    # It should leave the machine's own bubblewrap as it was.
    assert os.path.exists("/usr/bin/bwrap")
