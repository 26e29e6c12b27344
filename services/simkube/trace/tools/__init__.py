"""What ``skctl trace`` does with a trace: info, validate and fix, edit, convert.

Tools read any format through ``simkube.trace`` and the model; they never reach into a
format's modules, so a new format needs no tool to change.
"""
