"""How a file the user names is written (hermes_core.files), decided on real files: regular
files and new paths are replaced, devices, FIFOs and this process's descriptors written in
place, directories, disks and sockets refused; and a handle that failed never completes."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from disks import fill, small_tmpfs

from hermes_core.files import (
    AtomicFile,
    OutputError,
    open_output,
    output_kind,
    own_descriptor,
    writes_to_standard_output,
)


def test_a_regular_file_and_a_new_path_are_replaced(tmp_path: Path) -> None:
    existing = tmp_path / "old.jsonl"
    existing.write_text("old\n")
    assert output_kind(existing) == "replace"
    assert output_kind(tmp_path / "new.jsonl") == "replace"


def test_devices_and_fifos_are_written_in_place(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert output_kind(fifo) == "through"
    assert output_kind(Path("/dev/null")) == "through"
    link = tmp_path / "to-null"
    link.symlink_to("/dev/null")
    assert output_kind(link) == "through"


@pytest.mark.parametrize(
    ("name", "number"),
    [("/dev/stdout", 1), ("/dev/stderr", 2), ("/dev/fd/1", 1), ("/proc/self/fd/2", 2)],
)
def test_a_descriptor_named_by_path_is_recognised(name: str, number: int) -> None:
    assert own_descriptor(Path(name)) == number
    assert output_kind(Path(name)) == "through"


def test_a_link_to_dev_stdout_names_stdout(tmp_path: Path) -> None:
    link = tmp_path / "out"
    link.symlink_to("/dev/stdout")
    assert own_descriptor(link) == 1
    assert own_descriptor(tmp_path / "1") is None  # a file named like a descriptor is a file
    assert own_descriptor(Path(f"/proc/{os.getppid()}/fd/1")) is None  # another process's


def test_writes_to_standard_output_knows_stdout_from_another_pipe(tmp_path: Path) -> None:
    """Asked in a child whose stdout is a pipe: /dev/stdout is it, /dev/null is not."""
    probe = (
        "import sys; from pathlib import Path; "
        "from hermes_core.files import writes_to_standard_output as w; "
        "print([w(Path(p)) for p in sys.argv[1:]], file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, "/dev/stdout", "/proc/self/fd/1", "/dev/null", "x.html"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert done.stderr.strip() == "[True, True, False, False]", done.stderr
    assert writes_to_standard_output(tmp_path / "x.html") is False


def test_a_directory_a_disk_and_a_socket_are_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match=r"^cannot write .*: it is a directory; name a file$"):
        output_kind(tmp_path)
    listening = socket.socket(socket.AF_UNIX)
    try:
        listening.bind(str(tmp_path / "sock"))
        with pytest.raises(OutputError, match=r"it is a socket, which cannot be opened as a file"):
            open_output(tmp_path / "sock")
    finally:
        listening.close()
    if os.geteuid() != 0:
        return  # only root can make a block device node
    disk = tmp_path / "disk"
    os.mknod(disk, stat.S_IFBLK | 0o600, os.makedev(7, 250))
    with pytest.raises(OutputError, match=r"it is a block device \(a disk\)"):
        open_output(disk)
    assert stat.S_ISBLK(os.lstat(disk).st_mode)


def test_a_missing_folder_is_one_line(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "out.jsonl"
    with pytest.raises(OutputError) as raised:
        open_output(target)
    assert str(raised.value) == (
        f"cannot write {target}: No such file or directory; nothing was written"
    )


def test_a_regular_file_is_replaced_private_and_complete(tmp_path: Path) -> None:
    target = tmp_path / "page.html"
    target.write_text("old")
    target.chmod(0o644)
    with open_output(target) as out:
        out.write(b"new")
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["page.html"]


def test_a_handle_whose_write_failed_never_completes(tmp_path: Path) -> None:
    """Even when the caller swallows the failure and closes as if all went well."""
    with small_tmpfs(tmp_path / "disk") as disk:
        target = disk / "out.jsonl"
        target.write_bytes(b"old\n")
        fill(disk)
        handle = AtomicFile(target)
        with pytest.raises(OutputError, match="the disk is full"):
            handle.write(b"x" * 100_000)
        with pytest.raises(OutputError, match="the disk is full; nothing was written"):
            handle.close()
        assert handle.closed
        assert target.read_bytes() == b"old\n"
        assert sorted(p.name for p in disk.iterdir()) == ["filler", "out.jsonl"]
