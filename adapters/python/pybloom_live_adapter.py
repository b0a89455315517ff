"""pybloom-live's BloomFilter behind the exec protocol (docs/PROTOCOL.md).

Sized by its constructor, BloomFilter(capacity=n, error_rate=fpr); it takes no m, k or seed.
Keys go in as the library receives them: str (text), int (int) or 8 little-endian bytes
(bytes). The library hashes str(key).encode() for anything but str, so int keys hash like
their decimal text, and bytes keys like their Python repr "b'...'".
"""

import sys

from bloomlab_adapter import check_key_form, library_version, refuse_shape, serve, Refusal

from pybloom_live import BloomFilter

LIBRARY = f"pybloom-live {library_version('pybloom-live')}"


class PybloomLive:
    def __init__(self, header):
        if header.fpr is None:
            raise refuse_shape(LIBRARY)
        self.filter = BloomFilter(capacity=header.n, error_rate=header.fpr)
        self.capacity = header.n

    def hello(self):
        return {
            "name": f"{LIBRARY} BloomFilter",
            "memory_bits": self.filter.num_bits,
            "k": self.filter.num_slices,
            "seeded": False,
        }

    def insert(self, keys):
        add = self.filter.add
        for index, key in enumerate(keys):
            try:
                add(key)
            except IndexError as error:
                raise Refusal(
                    f"{LIBRARY} refused key {index + 1} of this batch with IndexError: {error} "
                    f"(it counts {len(self.filter)} distinct keys against capacity {self.capacity})"
                ) from None

    def query(self, keys):
        contains = self.filter.__contains__
        return [contains(key) for key in keys]

    def stats(self):
        return {"memory_bits": self.filter.num_bits, "k": self.filter.num_slices}


def build(header):
    structure = PybloomLive(header)
    check_key_form(structure, header, LIBRARY)
    return structure


if __name__ == "__main__":
    sys.exit(serve(build))
