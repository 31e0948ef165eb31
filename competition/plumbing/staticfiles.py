"""A static files finder serving each game's ``renderer.js`` as ``games/<slug>.js``."""

from __future__ import annotations

from django.contrib.staticfiles import utils
from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage

from games import all_games

RENDERER = "renderer.js"
PREFIX = "games"


def renderers() -> dict[str, str]:
    """``{"<slug>.js": path of the game's renderer}`` for every game that has one."""
    found = {}
    for game in all_games():
        path = game.part(RENDERER)
        if path is not None:
            found[f"{game.slug}.js"] = str(path)
    return found


class _Renderers(FileSystemStorage):
    """The renderers as one storage: ``<slug>.js`` names the file in the game's folder."""

    def __init__(self, files: dict[str, str]):
        super().__init__(location=None)
        self.files = files
        self.prefix = PREFIX

    def path(self, name: str) -> str:
        try:
            return self.files[name]
        except KeyError:
            raise FileNotFoundError(name) from None


class GameRendererFinder(BaseFinder):
    """Finds ``games/<slug>.js`` in the folder of game ``<slug>`` (``renderer.js``)."""

    def check(self, **kwargs):
        return []

    def find(self, path, find_all=False, **kwargs):
        find_all = self._check_deprecated_find_param(find_all=find_all, **kwargs)
        prefix, _, name = path.partition("/")
        found = renderers().get(name) if prefix == PREFIX else None
        if found is not None:
            return [found] if find_all else found
        return []  # as Django's own finders: nothing found (finders.find wraps a None)

    def list(self, ignore_patterns):
        files = renderers()
        storage = _Renderers(files)
        for name in sorted(files):
            if not utils.matches_patterns(name, ignore_patterns or []):
                yield name, storage
