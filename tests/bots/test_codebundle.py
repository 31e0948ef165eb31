"""Reading an uploaded bot (``bots/codebundle.py``): single files, archives, and every cap and
path rule, with real zip and tar.gz archives built here (hostile ones by hand where the
standard library's writers would refuse)."""

from __future__ import annotations

import io
import json
import tarfile
import time
import tracemalloc
import zipfile

import pytest

from bots.codebundle import (
    MAX_ARCHIVE_BYTES,
    MAX_FILES,
    MAX_UNPACKED_BYTES,
    CodeBundle,
    UploadError,
    read_upload,
)

BOT = b"import sys\nfor line in sys.stdin:\n    print('{}', flush=True)\n"
MANIFEST = json.dumps({"language": "python", "entry": "bot.py"}).encode()


def make_zip(members: dict[str, bytes], *, modes: dict[str, int] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            if modes and name in modes:
                info.external_attr = modes[name] << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def make_tar(members: list[tarfile.TarInfo | tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                archive.addfile(member)
            else:
                name, data = member
                info = tarfile.TarInfo(name)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def refused(filename: str, data: bytes) -> str:
    with pytest.raises(UploadError) as caught:
        read_upload(filename, data)
    message = str(caught.value)
    # Every refusal is a sentence for a person.
    assert message[0].isupper() and message.endswith("."), message
    return message


# -- accepted uploads --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("filename", "language"),
    [("bot.py", "python"), ("My Bot.js", "javascript"), ("bot.mjs", "javascript")],
)
def test_it_reads_a_single_source_file(filename, language):
    bundle = read_upload(filename, BOT)
    # It should take the language from the suffix and the file as the entry.
    assert isinstance(bundle, CodeBundle)
    assert bundle.language == language
    assert bundle.entry == filename
    assert dict(bundle.files) == {filename: BOT}


def test_it_reads_a_zip_with_a_manifest():
    data = make_zip({"arena.json": MANIFEST, "bot.py": BOT, "lib/util.py": b"X = 1\n", "lib/": b""})
    bundle = read_upload("bot.zip", data)
    # It should keep every file under its relative path, directories implied.
    assert bundle.language == "python" and bundle.entry == "bot.py"
    assert set(bundle.files) == {"arena.json", "bot.py", "lib/util.py"}
    assert bundle.files["lib/util.py"] == b"X = 1\n"


def test_it_reads_a_tar_gz_with_a_manifest_and_one_top_folder():
    manifest = json.dumps({"language": "javascript", "entry": "src/main.js"}).encode()
    data = make_tar([("mybot/arena.json", manifest), ("mybot/src/main.js", b"1;\n")])
    bundle = read_upload("bot.tar.gz", data)
    # It should take an archive of one folder as that folder's content.
    assert bundle.language == "javascript" and bundle.entry == "src/main.js"
    assert set(bundle.files) == {"arena.json", "src/main.js"}


# -- refused uploads ---------------------------------------------------------------------


def test_it_refuses_an_upload_over_the_byte_cap_before_reading_it():
    message = refused("bot.zip", b"\0" * (MAX_ARCHIVE_BYTES + 1))
    # It should name the limit, not a zip error (the cap comes first).
    assert "1 MiB" in message


@pytest.mark.parametrize("filename", ["bot.exe", "bot", "bot.tar", "bot.rar", ""])
def test_it_refuses_an_unknown_kind_of_file(filename):
    message = refused(filename, BOT)
    assert ".py" in message and ".zip" in message


def test_it_refuses_a_zip_bomb_while_decompressing():
    # 50 MiB of zeros per member compress to about 50 KB each; the headers declare the true
    # sizes, so a second bomb below lies about them.
    bomb = make_zip({"arena.json": MANIFEST, "bot.py": BOT, "zeros.bin": b"\0" * (50 << 20)})
    assert len(bomb) < MAX_ARCHIVE_BYTES
    tracemalloc.start()
    started = time.monotonic()
    message = refused("bomb.zip", bomb)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # It should stop at the unpacked cap: little memory and time spent.
    assert "10 MiB" in message
    assert peak < 3 * MAX_UNPACKED_BYTES
    assert time.monotonic() - started < 5


def test_it_counts_unpacked_bytes_without_trusting_the_zip_headers():
    bomb = bytearray(make_zip({"arena.json": MANIFEST, "bot.py": BOT, "z.bin": b"\0" * (20 << 20)}))
    # Rewrite the declared uncompressed size of z.bin (local header and central directory) to
    # 10 bytes: zipfile then refuses to read past it, so the lie cannot smuggle bytes in.
    real = (20 << 20).to_bytes(4, "little")
    assert bomb.count(real) == 2
    bomb = bytes(bomb).replace(real, (10).to_bytes(4, "little"))
    message = refused("bomb.zip", bomb)
    # It should refuse, with a sentence (a damaged archive), never unpack 20 MiB.
    assert "damaged" in message or "10 MiB" in message


def test_it_refuses_a_tar_gz_bomb_while_decompressing():
    bomb = make_tar([("arena.json", MANIFEST), ("bot.py", BOT), ("z.bin", b"\0" * (50 << 20))])
    assert len(bomb) < MAX_ARCHIVE_BYTES
    assert "10 MiB" in refused("bomb.tar.gz", bomb)


def test_it_refuses_an_archive_over_the_file_count():
    members = {f"f{i}.py": b"" for i in range(MAX_FILES)}
    members["arena.json"] = MANIFEST
    # It should count the members before reading any (zip) or as they come (tar).
    assert str(MAX_FILES) in refused("many.zip", make_zip(members))
    assert str(MAX_FILES) in refused("many.tar.gz", make_tar(list(members.items())))
    # ... and accept exactly the limit.
    members.pop("f0.py")
    members.pop("f1.py")
    members["bot.py"] = BOT
    assert len(read_upload("ok.zip", make_zip(members)).files) == MAX_FILES


@pytest.mark.parametrize(
    "name",
    ["../evil.py", "a/../../evil.py", "/etc/evil.py", "C:/evil.py", "a\\..\\evil.py", "a\nb.py"],
)
def test_it_refuses_a_zip_slip_path(name):
    data = make_zip({"arena.json": MANIFEST, "bot.py": BOT, name: b"x"})
    message = refused("slip.zip", data)
    # It should name the offending path.
    assert "path" in message or "name" in message


def test_it_refuses_a_tar_slip_path():
    assert "'..'" in refused("slip.tar.gz", make_tar([("arena.json", MANIFEST), ("../x", b"")]))
    assert "absolute" in refused("slip.tar.gz", make_tar([("/tmp/x", b"")]))


@pytest.mark.parametrize(
    "kind", [tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.CHRTYPE, tarfile.FIFOTYPE]
)
def test_it_refuses_links_and_devices_in_a_tar(kind):
    link = tarfile.TarInfo("bot.py")
    link.type = kind
    link.linkname = "/etc/passwd"
    message = refused("links.tar.gz", make_tar([("arena.json", MANIFEST), link]))
    assert "not a regular file" in message


def test_it_refuses_a_symlink_in_a_zip():
    data = make_zip({"arena.json": MANIFEST, "bot.py": b"/etc/passwd"}, modes={"bot.py": 0o120777})
    assert "not a regular file" in refused("links.zip", data)


@pytest.mark.parametrize(
    ("members", "words"),
    [
        ({"bot.py": BOT}, "no arena.json"),
        ({"arena.json": b"{", "bot.py": BOT}, "not valid JSON"),
        ({"arena.json": b"[]", "bot.py": BOT}, "must be an object"),
        ({"arena.json": b'{"language": "cobol", "entry": "bot.py"}'}, "language"),
        ({"arena.json": b'{"language": "python"}'}, "entry file"),
        ({"arena.json": b'{"language": "python", "entry": "main.py"}', "bot.py": BOT}, "not in"),
        ({"arena.json": b'{"language": "python", "entry": "bot.js"}', "bot.js": BOT}, "look like"),
        ({"arena.json": MANIFEST, "bot.py": b"\xff\xfe"}, "UTF-8"),
    ],
)
def test_it_explains_a_bad_manifest(members, words):
    assert words in refused("bot.zip", make_zip(members))


@pytest.mark.parametrize(("filename", "data"), [("bot.zip", b"PK\3\4junk"), ("b.tar.gz", b"junk")])
def test_it_explains_a_damaged_archive(filename, data):
    assert "damaged" in refused(filename, data)


def test_it_refuses_an_empty_upload():
    assert "empty" in refused("bot.py", b"")


def test_it_caps_the_unpacked_total_across_members():
    # Eleven members of 1 MiB each: none is large, their sum is over 10 MiB.
    members = {f"d{i}.bin": bytes(1 << 20) for i in range(11)}
    members.update({"arena.json": MANIFEST, "bot.py": BOT})
    assert sum(map(len, members.values())) > MAX_UNPACKED_BYTES
    assert "10 MiB" in refused("big.zip", make_zip(members))


@pytest.mark.parametrize("maker", ["zip", "tar"])
def test_it_refuses_a_path_that_is_both_a_file_and_a_folder(maker):
    members = {"arena.json": MANIFEST, "bot.py": BOT, "lib": b"x", "lib/util.py": b"X = 1\n"}
    data = make_zip(members) if maker == "zip" else make_tar(list(members.items()))
    # It should refuse at upload, in one sentence naming both, what could never be unpacked
    # (the sandbox's copy of the files failed, so the bot never started).
    message = refused(f"bot.{'zip' if maker == 'zip' else 'tar.gz'}", data)
    assert "'lib' both as a file and as the folder of 'lib/util.py'" in message
