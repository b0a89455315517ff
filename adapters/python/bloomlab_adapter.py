"""The exec protocol of docs/PROTOCOL.md (version 1), shared by the Python adapters.

An adapter module defines `build(header) -> Structure` and calls `serve(build)`. A Structure
has `hello() -> dict`, `insert(keys)`, `query(keys) -> list[bool]` and `stats() -> dict`; any
of them may raise `Refusal` (or any exception from the library), which is answered with the
protocol's error reply `{"error": "..."}`, after which the session is over.
"""

import json
import os
import struct
import sys
from dataclasses import dataclass
from importlib.metadata import version

PROTOCOL = 1
MAX_BATCH = 65_536
U64_LIMIT = 1 << 64
KEY_FORMS = ("text", "int", "bytes")
# bytes([True, False]) == b"\x01\x00"; translated to the answer characters "10".
ANSWER_TABLE = bytes.maketrans(b"\x00\x01", b"01")


class Refusal(Exception):
    """A reason the adapter cannot go on, sent as the error reply."""


@dataclass(frozen=True)
class Header:
    """The validated header: exactly one of `fpr` or (`m`, `k`) is set."""

    n: int
    seed: int
    key_form: str
    fpr: float | None
    m: int | None
    k: int | None


def library_version(distribution):
    """The installed version of a PyPI distribution, for the hello reply's name."""
    return version(distribution)


def parse_header(line):
    """The header line as a Header, or Refusal naming the first field that is wrong."""
    try:
        fields = json.loads(line)
    except ValueError as error:
        raise Refusal(f"header is not JSON: {error}") from None
    if not isinstance(fields, dict):
        raise Refusal("header is not a JSON object")
    if fields.get("protocol") != PROTOCOL:
        raise Refusal(f"unsupported protocol {fields.get('protocol')!r} (this adapter speaks 1)")
    n = _integer(fields, "n", 1, U64_LIMIT)
    seed = _integer(fields, "seed", 0, U64_LIMIT)
    key_form = fields.get("key_form", "text")
    if key_form not in KEY_FORMS:
        raise Refusal(f"key_form {key_form!r} is none of text, int, bytes")
    has_fpr, has_shape = "fpr" in fields, "m" in fields or "k" in fields
    if has_fpr == has_shape:
        raise Refusal("the header needs either fpr, or m and k")
    if has_fpr:
        fpr = fields["fpr"]
        if not isinstance(fpr, (int, float)) or not 0 < fpr < 1:
            raise Refusal(f"fpr {fpr!r} is not a number in (0, 1)")
        return Header(n, seed, key_form, float(fpr), None, None)
    m = _integer(fields, "m", 1, U64_LIMIT)
    k = _integer(fields, "k", 1, 1 << 32)
    return Header(n, seed, key_form, None, m, k)


def _integer(fields, name, low, limit):
    value = fields.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value < limit:
        raise Refusal(f"{name} {value!r} is not an integer in {low}..{limit}")
    return value


def _text_keys(block, count):
    try:
        keys = block.decode("utf-8").split("\n")
    except UnicodeDecodeError as error:
        raise Refusal(f"a text key is not UTF-8: {error}") from None
    keys.pop()  # after the last LF
    return keys


def _int_keys(block, count):
    try:
        keys = list(map(int, block.split(b"\n", count)[:count]))
    except ValueError as error:
        raise Refusal(f"an int key is no decimal integer: {error}") from None
    if keys and (min(keys) < 0 or max(keys) >= U64_LIMIT):
        raise Refusal("an int key is outside 0..2^64")
    return keys


def _bytes_keys(block, count):
    packed = struct.pack(f"<{count}Q", *_int_keys(block, count))
    return [packed[at : at + 8] for at in range(0, 8 * count, 8)]


KEY_READERS = {"text": _text_keys, "int": _int_keys, "bytes": _bytes_keys}
SAMPLE_BLOCK = b"0\n"


def check_key_form(structure, header, library):
    """Refusal when the library rejects keys of the header's form (probed on one query)."""
    sample = KEY_READERS[header.key_form](SAMPLE_BLOCK, 1)
    try:
        structure.query(sample)
    except Exception as error:  # the library's own refusal, whatever its type
        raise Refusal(
            f"{library} refuses {header.key_form} keys: {type(error).__name__}: {error}"
        ) from None


def refuse_shape(library):
    """The Refusal for a library whose public API sizes itself and takes no m and k."""
    return Refusal(
        f"{library} sizes itself from a capacity and an error rate: its public API takes "
        "no m and k (send fpr instead)"
    )


def serve(build, header_line=None):
    """Runs one session on stdin/stdout; returns the exit status."""
    source, sink = _Input(), sys.stdout.buffer
    if header_line is None:
        header_line = source.line()
        if header_line is None:
            return 0
    try:
        header = parse_header(header_line)
        structure = build(header)
        _reply(sink, json.dumps(structure.hello()).encode())
    except Exception as error:
        _reply_error(sink, error)
        return _drain(source)
    read_keys = KEY_READERS[header.key_form]
    while True:
        line = source.line()
        if line is None:
            return 0
        try:
            if _command(line, source, sink, structure, read_keys):
                return 0
        except _Truncated as error:
            print(f"bloomlab adapter: {error}", file=sys.stderr)
            return 1
        except Exception as error:
            _reply_error(sink, error)
            return _drain(source)


class _Truncated(Exception):
    """Input ended inside a batch: a framing failure, not the library's."""


class _Input:
    """Lines of standard input split on LF only, read in large chunks.

    A batch's key lines come back as one block (bytes ending in LF), so that a key form
    converts a whole batch with a few calls into C rather than one call per key."""

    CHUNK = 1 << 20

    def __init__(self):
        self.pending = b""

    def line(self):
        """The next line without its LF; None at end of input (a partial last line included)."""
        end = self.pending.find(b"\n")
        while end < 0:
            chunk = os.read(0, self.CHUNK)
            if not chunk:
                return None
            searched = len(self.pending)
            self.pending += chunk
            end = self.pending.find(b"\n", searched)
        line, self.pending = self.pending[:end], self.pending[end + 1 :]
        return line

    def block(self, count):
        """The next count lines as one block, each with its LF."""
        chunks, newlines = [self.pending], self.pending.count(b"\n")
        while newlines < count:
            chunk = os.read(0, self.CHUNK)
            if not chunk:
                raise _Truncated(f"input ended after {newlines} of {count} keys")
            chunks.append(chunk)
            newlines += chunk.count(b"\n")
        data = b"".join(chunks)
        if newlines == count and data.endswith(b"\n"):
            self.pending = b""
            return data
        lines = data.split(b"\n", count)
        self.pending = lines.pop()
        lines.append(b"")
        return b"\n".join(lines)


def _command(line, source, sink, structure, read_keys):
    """Runs one command; True at `end`."""
    verb, _, count = line.partition(b" ")
    if verb == b"end" and not count:
        return True
    if verb == b"stats" and not count:
        _reply(sink, json.dumps(structure.stats()).encode())
        return False
    if verb not in (b"insert", b"query") or not count.isdigit() or int(count) > MAX_BATCH:
        raise Refusal(f"unknown command {line!r}")
    count = int(count)
    keys = read_keys(source.block(count), count)
    if verb == b"insert":
        structure.insert(keys)
        _reply(sink, b"ok")
    else:
        _reply(sink, bytes(structure.query(keys)).translate(ANSWER_TABLE))
    return False


def _drain(source):
    """After an error reply: read until `end` or end of input, then exit 0."""
    while (line := source.line()) is not None:
        if line == b"end":
            break
    return 0


def _reply(sink, payload):
    sink.write(payload + b"\n")
    sink.flush()


def _reply_error(sink, error):
    message = str(error) if isinstance(error, Refusal) else f"{type(error).__name__}: {error}"
    _reply(sink, json.dumps({"error": message}).encode())


def read_header_unbuffered():
    """The header line read byte by byte, so that nothing after it is consumed (for re-exec)."""
    line = bytearray()
    while not line.endswith(b"\n"):
        byte = os.read(0, 1)
        if not byte:
            break
        line += byte
    return bytes(line)
