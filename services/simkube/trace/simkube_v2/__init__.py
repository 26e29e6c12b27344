"""SimKube's v2 trace document (``.sktrace`` msgpack and its JSON form), decoded into the
model and encoded from it, so traces move both ways between SimKube and this project.
Depends on ``model`` only."""
