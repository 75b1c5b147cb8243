"""Reading an SQLite database file page by page, without SQLite: what ``repair`` salvages a
damaged store with.

SQLite refuses a damaged file as a whole ("database disk image is malformed") as soon as a
query meets a bad page, and a file cut short fails every query. This module reads the file as
SQLite's file format documents it (https://www.sqlite.org/fileformat2.html) and gets out
every row that is still whole:

* the 100-byte header gives the page size and text encoding — guessed from the pages
  themselves when the header is garbage;
* a write-ahead log beside the file (``-wal``) is read too: its committed frames replace the
  file's pages, as SQLite would see them (frames whose checksums break the chain are not);
* b-trees are walked from their root pages (table trees give ``(rowid, values)`` rows, index
  trees their keys); a page that is missing, cut off or does not parse is skipped and its
  tree marked incomplete, the rest of the tree is still read;
* leaf pages no walk reached and that are not on the free-page list are the rows of subtrees
  whose parent page was lost: :meth:`PageFile.unclaimed_table_leaves` finds them for the
  caller to recognise by their shape.

Nothing here writes. Only ever used on a file no SQLite connection of this process holds
(DESIGN §9: it opens the file by path).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

HEADER_MAGIC = b"SQLite format 3\x00"
WAL_MAGIC = (0x377F0682, 0x377F0683)
PAGE_SIZES = (4096, 1024, 2048, 8192, 16384, 32768, 65536, 512)

INTERIOR_INDEX = 2
INTERIOR_TABLE = 5
LEAF_INDEX = 10
LEAF_TABLE = 13
_PAGE_KINDS = (INTERIOR_INDEX, INTERIOR_TABLE, LEAF_INDEX, LEAF_TABLE)
_ENCODINGS = {1: "utf-8", 2: "utf-16-le", 3: "utf-16-be"}

Value = int | float | str | bytes | None


class Unreadable(Exception):
    """A page, cell or record that does not parse (damage)."""


def read_varint(data: bytes, offset: int) -> tuple[int, int]:
    """SQLite's variable-length integer at ``offset``: (value, offset after it)."""
    value = 0
    for index in range(8):
        if offset + index >= len(data):
            raise Unreadable("varint runs past the page")
        byte = data[offset + index]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, offset + index + 1
    if offset + 8 >= len(data):
        raise Unreadable("varint runs past the page")
    value = (value << 8) | data[offset + 8]
    if value >= 1 << 63:
        value -= 1 << 64
    return value, offset + 9


def decode_record(payload: bytes, encoding: str = "utf-8") -> tuple[list[Value], bool]:
    """The values of a record, and whether the record was whole: a payload cut short (its
    overflow pages lost) gives the columns that fit and False. Raises :class:`Unreadable`
    when the record header itself is broken or a text is not valid in ``encoding``."""
    header_size, offset = read_varint(payload, 0)
    if header_size < 1 or header_size > len(payload):
        raise Unreadable("record header runs past the payload")
    types: list[int] = []
    while offset < header_size:
        serial, offset = read_varint(payload, offset)
        if serial in (10, 11):
            raise Unreadable("reserved serial type")
        types.append(serial)
    if offset != header_size:
        raise Unreadable("record header size does not match its types")
    values: list[Value] = []
    body = header_size
    for serial in types:
        size = _serial_size(serial)
        if body + size > len(payload):
            return values, False
        values.append(_value(serial, payload[body : body + size], encoding))
        body += size
    return values, True


_INT_SIZES = {1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8}


def _serial_size(serial: int) -> int:
    if serial in _INT_SIZES:
        return _INT_SIZES[serial]
    if serial == 7:
        return 8
    if serial >= 12:
        return (serial - 12) // 2
    return 0


def _value(serial: int, raw: bytes, encoding: str) -> Value:
    if serial == 0:
        return None
    if serial in _INT_SIZES:
        return int.from_bytes(raw, "big", signed=True)
    if serial == 7:
        number: float = struct.unpack(">d", raw)[0]
        return number
    if serial == 8:
        return 0
    if serial == 9:
        return 1
    if serial % 2 == 0:
        return bytes(raw)
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as error:
        raise Unreadable("text that is not valid in the file's encoding") from error


@dataclass(frozen=True, slots=True)
class Cell:
    """One cell of a b-tree page."""

    child: int | None
    """The left child page (interior pages)."""
    rowid: int | None
    """The key of table pages."""
    size: int
    """The payload's full size in bytes (0 for interior table cells, which have none)."""
    local: bytes
    """The part of the payload on the page itself (read :meth:`PageFile.payload` for all)."""
    first_overflow: int
    """The first overflow page (0 when the payload fits on the page)."""


@dataclass(frozen=True, slots=True)
class Payload:
    """A cell's whole payload, as far as its overflow chain could be read."""

    data: bytes
    whole: bool
    """False when the overflow chain was cut (``data`` is the part before the cut)."""
    chain: tuple[int, ...]
    """The overflow pages read."""


@dataclass(frozen=True, slots=True)
class BTreePage:
    number: int
    kind: int
    cells: list[Cell]
    right_child: int | None

    @property
    def is_leaf(self) -> bool:
        return self.kind in (LEAF_TABLE, LEAF_INDEX)

    @property
    def is_table(self) -> bool:
        return self.kind in (LEAF_TABLE, INTERIOR_TABLE)


@dataclass
class TreeWalk:
    """How a walk of one b-tree went."""

    root: int
    pages: set[int] = field(default_factory=set)
    """Every page the walk read, overflow pages included."""
    damaged_pages: int = 0
    """Pages of the tree that were missing or did not parse (their subtrees are unread)."""
    damaged_cells: int = 0
    """Entries that did not parse, or whose payload lost its overflow pages."""

    @property
    def complete(self) -> bool:
        """Every page and cell of the tree was read."""
        return self.damaged_pages == 0 and self.damaged_cells == 0


@dataclass(frozen=True, slots=True)
class Layout:
    """What the header says (or the pages suggest, when it is garbage)."""

    page_size: int
    reserved: int
    encoding: str
    header_valid: bool
    freelist_trunk: int
    freelist_count: int

    @property
    def usable(self) -> int:
        return self.page_size - self.reserved


class PageFile:
    """A possibly damaged SQLite file, read page by page (with its write-ahead log)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._descriptor = os.open(path, os.O_RDONLY)
        try:
            self._file_size = os.fstat(self._descriptor).st_size
            header = os.pread(self._descriptor, 100, 0)
            self.layout = _layout(header) or self._guess_layout()
            self._wal: dict[int, bytes] = {}
            self._wal_pages = 0
            self._read_wal(Path(f"{path}-wal"))
        except BaseException:
            os.close(self._descriptor)
            raise
        self.page_count = max(self._file_size // self.layout.page_size, self._wal_pages)
        self._free: set[int] | None = None

    def close(self) -> None:
        os.close(self._descriptor)

    def __enter__(self) -> PageFile:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------------ pages

    def page(self, number: int) -> bytes | None:
        """Page ``number`` (1-based), or None when the file does not hold all of it."""
        if number < 1 or number > self.page_count:
            return None
        found = self._wal.get(number)
        if found is not None:
            return found
        size = self.layout.page_size
        data = os.pread(self._descriptor, size, (number - 1) * size)
        return data if len(data) == size else None

    def btree_page(self, number: int) -> BTreePage:
        """Page ``number`` parsed as a b-tree page (raises :class:`Unreadable`)."""
        data = self.page(number)
        if data is None:
            raise Unreadable(f"page {number} is beyond the end of the file")
        return self._parse(number, data)

    def free_pages(self) -> set[int]:
        """The pages on the free-page list (as far as its trunk pages can be read)."""
        if self._free is not None:
            return self._free
        free: set[int] = set()
        trunk = self.layout.freelist_trunk if self.layout.header_valid else 0
        seen: set[int] = set()
        while 1 < trunk <= self.page_count and trunk not in seen:
            seen.add(trunk)
            free.add(trunk)
            data = self.page(trunk)
            if data is None:
                break
            following = int.from_bytes(data[0:4], "big")
            leaves = int.from_bytes(data[4:8], "big")
            if leaves > (self.layout.usable - 8) // 4:
                break
            for index in range(leaves):
                leaf = int.from_bytes(data[8 + 4 * index : 12 + 4 * index], "big")
                if 1 < leaf <= self.page_count:
                    free.add(leaf)
            trunk = following
        self._free = free
        return free

    # ------------------------------------------------------------------ trees

    def walk(self, root: int, walk: TreeWalk | None = None) -> Iterator[tuple[BTreePage, Cell]]:
        """Every readable cell that holds an entry of the b-tree at ``root``: the leaf cells
        of a table tree (its interior cells hold only keys), every cell of an index tree.
        ``walk`` records which pages were read and how many were damaged."""
        walk = walk if walk is not None else TreeWalk(root)
        pending = [root]
        while pending:
            number = pending.pop()
            if number in walk.pages:
                walk.damaged_pages += 1  # a loop: the page meant here is lost
                continue
            try:
                page = self.btree_page(number)
            except Unreadable:
                walk.damaged_pages += 1
                continue
            walk.pages.add(number)
            children = [cell.child for cell in page.cells if cell.child is not None]
            if page.right_child is not None:
                children.append(page.right_child)
            pending.extend(reversed(children))
            for cell in page.cells:
                if page.is_leaf or not page.is_table:
                    yield page, cell

    def payload(self, cell: Cell) -> Payload:
        """The whole payload of ``cell``, its overflow chain followed.

        Overflow pages carry no header to check, so a damaged one is told by what SQLite
        always writes: the last page of a chain points nowhere (0), and a page of the chain
        holding nothing but zero bytes is a page that was wiped (text never is all NULs)."""
        if not cell.first_overflow:
            return Payload(cell.local, True, ())
        parts = [cell.local]
        chain: list[int] = []
        remaining = cell.size - len(cell.local)
        number = cell.first_overflow
        room = self.layout.usable - 4
        while remaining > 0:
            data = self.page(number) if number > 1 and number not in chain else None
            if data is None:
                return Payload(b"".join(parts), False, tuple(chain))
            chain.append(number)
            take = min(room, remaining)
            part = data[4 : 4 + take]
            following = int.from_bytes(data[0:4], "big")
            if not part.strip(b"\0") or (take == remaining and following != 0):
                return Payload(b"".join(parts), False, tuple(chain))
            parts.append(part)
            remaining -= take
            number = following
        return Payload(b"".join(parts), True, tuple(chain))

    def table_rows(
        self, root: int, walk: TreeWalk | None = None
    ) -> Iterator[tuple[int, list[Value], bool]]:
        """``(rowid, values, whole)`` of every row of the table tree at ``root`` on a page
        that could be read; ``whole`` is False for a row whose record is damaged or whose last
        columns were lost with its overflow pages (``values`` holds what could be read)."""
        walk = walk if walk is not None else TreeWalk(root)
        for page, cell in self.walk(root, walk):
            if not page.is_table or cell.rowid is None:
                continue
            row = self._row(cell, walk)
            yield (cell.rowid, *row) if row is not None else (cell.rowid, [], False)

    def index_keys(self, root: int, walk: TreeWalk | None = None) -> Iterator[list[Value]]:
        """The key (the indexed values, then the rowid) of every readable entry of the index
        tree at ``root``."""
        walk = walk if walk is not None else TreeWalk(root)
        for page, cell in self.walk(root, walk):
            if page.is_table:
                continue
            row = self._row(cell, walk)
            if row is not None and row[1]:
                yield row[0]
            elif row is not None:
                walk.damaged_cells += 1

    def _row(self, cell: Cell, walk: TreeWalk) -> tuple[list[Value], bool] | None:
        payload = self.payload(cell)
        walk.pages.update(payload.chain)
        try:
            values, whole = decode_record(payload.data, self.layout.encoding)
        except Unreadable:
            walk.damaged_cells += 1
            return None
        if not (whole and payload.whole):
            walk.damaged_cells += 1
        return values, whole and payload.whole

    def unclaimed_table_leaves(self, claimed: set[int]) -> Iterator[BTreePage]:
        """Table leaf pages outside ``claimed`` and the free-page list: the leaves of
        subtrees whose parent page was lost (or, when the schema is lost, every leaf)."""
        free = self.free_pages()
        for number in range(1, self.page_count + 1):
            if number in claimed or number in free:
                continue
            data = self.page(number)
            if data is None or data[100 if number == 1 else 0] != LEAF_TABLE:
                continue
            try:
                yield self._parse(number, data)
            except Unreadable:
                continue

    def leaf_rows(self, page: BTreePage) -> Iterator[tuple[int, list[Value], bool]]:
        """``(rowid, values, whole)`` of the rows of a table leaf page."""
        walk = TreeWalk(page.number)
        for cell in page.cells:
            if cell.rowid is None:
                continue
            row = self._row(cell, walk)
            yield (cell.rowid, *row) if row is not None else (cell.rowid, [], False)

    # ------------------------------------------------------------------ parsing

    def _parse(self, number: int, data: bytes) -> BTreePage:
        usable = self.layout.usable
        start = 100 if number == 1 else 0
        kind = data[start]
        if kind not in _PAGE_KINDS:
            raise Unreadable(f"page {number} is not a b-tree page")
        leaf = kind in (LEAF_TABLE, LEAF_INDEX)
        header = 8 if leaf else 12
        cell_count = int.from_bytes(data[start + 3 : start + 5], "big")
        pointers_end = start + header + 2 * cell_count
        if pointers_end > usable:
            raise Unreadable(f"page {number}: too many cells")
        content = int.from_bytes(data[start + 5 : start + 7], "big") or 65536
        if content > usable or (cell_count and content < pointers_end):
            raise Unreadable(f"page {number}: cell content area out of bounds")
        right = None
        if not leaf:
            right = int.from_bytes(data[start + 8 : start + 12], "big")
            if not 1 < right <= self.page_count:
                raise Unreadable(f"page {number}: right child out of range")
        cells: list[Cell] = []
        for index in range(cell_count):
            at = start + header + 2 * index
            offset = int.from_bytes(data[at : at + 2], "big")
            if offset < pointers_end or offset >= usable:
                raise Unreadable(f"page {number}: cell pointer out of bounds")
            cells.append(self._cell(kind, data, offset, number))
        return BTreePage(number, kind, cells, right)

    def _cell(self, kind: int, data: bytes, offset: int, number: int) -> Cell:
        usable = self.layout.usable
        child: int | None = None
        rowid: int | None = None
        if kind in (INTERIOR_TABLE, INTERIOR_INDEX):
            if offset + 4 > usable:
                raise Unreadable(f"page {number}: cell runs past the page")
            child = int.from_bytes(data[offset : offset + 4], "big")
            if not 1 < child <= self.page_count:
                raise Unreadable(f"page {number}: child page out of range")
            offset += 4
        if kind == INTERIOR_TABLE:
            rowid, _ = read_varint(data[:usable], offset)
            return Cell(child, rowid, 0, b"", 0)
        size, offset = read_varint(data[:usable], offset)
        if kind == LEAF_TABLE:
            rowid, offset = read_varint(data[:usable], offset)
        if size < 0 or size > 1 << 31:
            raise Unreadable(f"page {number}: payload size out of range")
        local = self._local_size(size, kind == LEAF_TABLE)
        if offset + local > usable:
            raise Unreadable(f"page {number}: payload runs past the page")
        first = 0
        if local < size:
            if offset + local + 4 > usable:
                raise Unreadable(f"page {number}: overflow pointer runs past the page")
            first = int.from_bytes(data[offset + local : offset + local + 4], "big")
        return Cell(child, rowid, size, bytes(data[offset : offset + local]), first)

    def _local_size(self, size: int, table_leaf: bool) -> int:
        """How much of a payload of ``size`` bytes sits on the b-tree page itself."""
        usable = self.layout.usable
        most = usable - 35 if table_leaf else ((usable - 12) * 64 // 255) - 23
        if size <= most:
            return size
        least = ((usable - 12) * 32 // 255) - 23
        local = least + (size - least) % (usable - 4)
        return local if local <= most else least

    # ------------------------------------------------------------------ layout

    def _guess_layout(self) -> Layout:
        """The layout when the header is garbage: the smallest page size under which (about)
        as many pages parse as b-tree pages as under any (a multiple of the true size does
        as well as the true size, a fraction of it much worse); UTF-8, what this store
        always uses; no reserved bytes; no free-page list."""
        scores: dict[int, float] = {}
        for size in PAGE_SIZES:
            pages = self._file_size // size
            if pages < 2:
                continue
            sample = range(2, pages + 1, max(1, pages // 256))
            plausible = 0
            for number in sample:
                data = os.pread(self._descriptor, size, (number - 1) * size)
                if len(data) == size and _plausible_btree(data, size):
                    plausible += 1
            scores[size] = plausible / len(sample)
        best = max(scores.values(), default=0.0)
        fitting = [size for size, score in scores.items() if best and score >= 0.9 * best]
        return Layout(min(fitting, default=4096), 0, "utf-8", False, 0, 0)

    def _read_wal(self, wal: Path) -> None:
        """Take the committed frames of ``wal`` over the file's pages (as a reader would
        see the database); a log that does not match or breaks off is read up to there."""
        try:
            data = wal.read_bytes()
        except OSError:
            return
        if len(data) < 32:
            return
        magic, _version, page_size, _checkpoint, salt1, salt2 = struct.unpack(">IIIIII", data[:24])
        if magic not in WAL_MAGIC or page_size != self.layout.page_size:
            return
        big_endian = magic & 1
        checksum = _wal_checksum(data[:24], (0, 0), big_endian)
        if checksum != struct.unpack(">II", data[24:32]):
            return
        frame_size = 24 + page_size
        pending: dict[int, bytes] = {}
        offset = 32
        while offset + frame_size <= len(data):
            frame = data[offset : offset + frame_size]
            number, commit_size, frame_salt1, frame_salt2 = struct.unpack(">IIII", frame[:16])
            if (frame_salt1, frame_salt2) != (salt1, salt2):
                break
            checksum = _wal_checksum(frame[:8], checksum, big_endian)
            checksum = _wal_checksum(frame[24:], checksum, big_endian)
            if checksum != struct.unpack(">II", frame[16:24]):
                break
            pending[number] = frame[24:]
            if commit_size:
                self._wal.update(pending)
                pending.clear()
                self._wal_pages = commit_size
            offset += frame_size


def _wal_checksum(data: bytes, seed: tuple[int, int], big_endian: int) -> tuple[int, int]:
    """SQLite's WAL checksum of ``data`` (a multiple of 8 bytes) continuing from ``seed``."""
    s0, s1 = seed
    words = struct.unpack(f"{'>' if big_endian else '<'}{len(data) // 4}I", data)
    mask = 0xFFFFFFFF
    for index in range(0, len(words), 2):
        s0 = (s0 + words[index] + s1) & mask
        s1 = (s1 + words[index + 1] + s0) & mask
    return s0, s1


def _layout(header: bytes) -> Layout | None:
    """The layout the header states, or None when it is not a valid SQLite header."""
    if len(header) < 100 or not header.startswith(HEADER_MAGIC):
        return None
    raw = int.from_bytes(header[16:18], "big")
    page_size = 65536 if raw == 1 else raw
    if page_size not in PAGE_SIZES:
        return None
    reserved = header[20]
    encoding = _ENCODINGS.get(int.from_bytes(header[56:60], "big") or 1)
    if encoding is None or reserved >= page_size - 480:
        return None
    return Layout(
        page_size=page_size,
        reserved=reserved,
        encoding=encoding,
        header_valid=True,
        freelist_trunk=int.from_bytes(header[32:36], "big"),
        freelist_count=int.from_bytes(header[36:40], "big"),
    )


def _plausible_btree(data: bytes, size: int) -> bool:
    """Whether a page looks like a b-tree page under page size ``size`` (for guessing)."""
    kind = data[0]
    if kind not in _PAGE_KINDS:
        return False
    cells = int.from_bytes(data[3:5], "big")
    content = int.from_bytes(data[5:7], "big") or 65536
    header = 8 if kind in (LEAF_TABLE, LEAF_INDEX) else 12
    if header + 2 * cells > size or content > size:
        return False
    pointers = [
        int.from_bytes(data[header + 2 * i : header + 2 * i + 2], "big") for i in range(cells)
    ]
    return all(content <= p < size for p in pointers)


def record_types(payload: bytes) -> list[int] | None:
    """The serial types of a record's columns (its header, which sits at the start of the
    payload: the page's local part is enough), or None when the header does not parse."""
    try:
        header_size, offset = read_varint(payload, 0)
        if header_size < 1 or header_size > len(payload):
            return None
        types: list[int] = []
        while offset < header_size:
            serial, offset = read_varint(payload, offset)
            if serial in (10, 11):
                return None
            types.append(serial)
    except Unreadable:
        return None
    return types if offset == header_size else None
