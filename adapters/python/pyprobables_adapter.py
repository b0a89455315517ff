"""pyprobables' BloomFilter behind the exec protocol (docs/PROTOCOL.md).

Sized by its constructor, BloomFilter(est_elements=n, false_positive_rate=fpr), with the
library's default hash (FNV-1a, one seed per probe); it takes no m, k or seed. Its keys are str
or bytes: `int` keys are refused at the hello with the library's own error.
"""

import sys

from bloomlab_adapter import check_key_form, library_version, refuse_shape, serve

from probables import BloomFilter

LIBRARY = f"pyprobables {library_version('pyprobables')}"


class Pyprobables:
    def __init__(self, header):
        if header.fpr is None:
            raise refuse_shape(LIBRARY)
        self.filter = BloomFilter(est_elements=header.n, false_positive_rate=header.fpr)

    def hello(self):
        return {
            "name": f"{LIBRARY} BloomFilter",
            "memory_bits": self.filter.number_bits,
            "k": self.filter.number_hashes,
            "seeded": False,
        }

    def insert(self, keys):
        add = self.filter.add
        for key in keys:
            add(key)

    def query(self, keys):
        check = self.filter.check
        return [check(key) for key in keys]

    def stats(self):
        return {"memory_bits": self.filter.number_bits, "k": self.filter.number_hashes}


def build(header):
    structure = Pyprobables(header)
    check_key_form(structure, header, LIBRARY)
    return structure


if __name__ == "__main__":
    sys.exit(serve(build))
