"""The trace as Python values, whatever file it came from: events, objects, lifecycles.

``types`` holds what readers produce and writers consume; the other modules read inside
object bodies the way every tool and the driver must (identity checks, typed field access,
pod specs, the references a pod spec makes, label selectors), and ``source`` is the one
interface every reader offers. Nothing here knows a file format.
"""
