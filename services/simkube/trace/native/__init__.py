"""The native format: zstd-compressed, length-framed msgpack records, read and written in
constant memory, with every size checked before it is trusted. Depends on ``model`` only."""
