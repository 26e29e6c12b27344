"""The label every simulated node carries, and every simulated pod selects.

Replayed pods must land on fake nodes only — never on a kind cluster's real control-plane
node — so sk-driver gives them a node selector, and every component that creates fake nodes
(the local environment's ``--nodes``, sk-cloudprov's node groups) puts the matching label on
them. KWOK's own marker is an annotation, which a selector cannot match, hence a label. It
lives in core because both sides must agree and neither service imports the other.
"""

from __future__ import annotations

from typing import Final

NODE_TYPE_LABEL: Final = "type"
NODE_TYPE_VALUE: Final = "kwok"
