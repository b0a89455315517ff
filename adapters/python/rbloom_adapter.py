"""rbloom's Bloom behind the exec protocol (docs/PROTOCOL.md).

Sized by its constructor, Bloom(expected_items=n, false_positive_rate=fpr), with its default
hash function, Python's built-in hash(); it takes no m or k. hash() of str and bytes is keyed
by PYTHONHASHSEED, so the adapter reads the header, then re-executes itself with
PYTHONHASHSEED = seed mod 2^32: the seed reaches the library, and the same seed gives the same
filter. hash() of an int is the int itself (mod 2^61 - 1) whatever the seed, so `int` keys are
reported unseeded. rbloom exposes no k: it is read from the library's save format (a u64 k,
then the bit array) of an identically sized filter built with a stand-in hash function.
"""

import json
import os
import sys

from bloomlab_adapter import (
    check_key_form,
    library_version,
    read_header_unbuffered,
    refuse_shape,
    serve,
)

from rbloom import Bloom

LIBRARY = f"rbloom {library_version('rbloom')}"
HEADER_VARIABLE = "BLOOMLAB_RBLOOM_HEADER"
HASH_SEED_LIMIT = 1 << 32


def _stand_in_hash(_key):
    return 0


def _hash_count(expected_items, false_positive_rate, size_in_bits):
    """k as the save format records it; None when the format is not the one described above."""
    twin = Bloom(expected_items, false_positive_rate, hash_func=_stand_in_hash).save_bytes()
    if len(twin) != 8 + size_in_bits // 8:
        return None
    return int.from_bytes(twin[:8], "little")


class Rbloom:
    def __init__(self, header):
        if header.fpr is None:
            raise refuse_shape(LIBRARY)
        self.filter = Bloom(header.n, header.fpr)
        self.k = _hash_count(header.n, header.fpr, self.filter.size_in_bits)
        self.seeded = header.key_form != "int"

    def hello(self):
        reply = {"name": f"{LIBRARY} Bloom", "memory_bits": self.filter.size_in_bits}
        if self.k is not None:
            reply["k"] = self.k
        reply["seeded"] = self.seeded
        return reply

    def insert(self, keys):
        self.filter.update(keys)

    def query(self, keys):
        contains = self.filter.__contains__
        return [contains(key) for key in keys]

    def stats(self):
        reply = {"memory_bits": self.filter.size_in_bits}
        if self.k is not None:
            reply["k"] = self.k
        return reply


def build(header):
    structure = Rbloom(header)
    check_key_form(structure, header, LIBRARY)
    return structure


def reexec_with_hash_seed():
    """Reads the header, then replaces this process by one whose hash() is keyed by the seed."""
    header_line = read_header_unbuffered()
    if not header_line:
        sys.exit(0)
    environment = dict(os.environ)
    environment[HEADER_VARIABLE] = header_line.decode("utf-8", "replace")
    try:
        seed = json.loads(header_line)["seed"]
        environment["PYTHONHASHSEED"] = str(int(seed) % HASH_SEED_LIMIT)
    except (ValueError, KeyError, TypeError):
        pass  # the re-executed adapter refuses the header with the reason
    os.execve(sys.executable, [sys.executable, os.path.abspath(__file__)], environment)


if __name__ == "__main__":
    header_text = os.environ.get(HEADER_VARIABLE)
    if header_text is None:
        reexec_with_hash_seed()
    sys.exit(serve(build, header_text.encode("utf-8")))
