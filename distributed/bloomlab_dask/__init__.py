"""bloomlab-dask: a bloomlab run cut into shards (`--shard I/N`), counted on a Dask
distributed cluster, and merged (`bloomlab merge`) into exactly the single run's output."""

__version__ = "0.1.0"
