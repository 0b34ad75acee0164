"""Which manifests a commit merges (``commit.manifest-merge.enabled``,
``commit.manifest.min-count-to-merge``, ``commit.manifest.target-size-bytes``).

The plan is the Java reference's ``ManifestMergeManager``: manifests are grouped by partition
spec (highest spec id first), each group is bin-packed by manifest length from its end with a
look-back of one bin (so order is kept and the under-filled bin is the oldest, merged next
time), and a bin is merged unless it holds one manifest, or holds the commit's first manifest
(its new files) with fewer than ``min_count_to_merge`` manifests.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["MergeSettings", "merge_plan", "pack_end"]

T = TypeVar("T")

MANIFEST_MERGE_ENABLED = "commit.manifest-merge.enabled"
MANIFEST_MIN_MERGE_COUNT = "commit.manifest.min-count-to-merge"
MANIFEST_TARGET_SIZE_BYTES = "commit.manifest.target-size-bytes"


@dataclass(frozen=True)
class MergeSettings:
    enabled: bool = True
    min_count_to_merge: int = 100
    target_size_bytes: int = 8 * 1024 * 1024

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> MergeSettings:
        def integer(key: str, default: int) -> int:
            try:
                return int(props[key])
            except (KeyError, ValueError):
                return default

        enabled = props.get(MANIFEST_MERGE_ENABLED, "true").strip().lower() == "true"
        return cls(
            enabled,
            integer(MANIFEST_MIN_MERGE_COUNT, cls.min_count_to_merge),
            integer(MANIFEST_TARGET_SIZE_BYTES, cls.target_size_bytes),
        )


def pack_end(items: Sequence[T], weight: Callable[[T], int], target: int) -> list[list[T]]:
    """Bins of consecutive items of total weight at most ``target`` (an item heavier than the
    target gets a bin of its own), filled from the end with one open bin at a time."""
    bins: list[list[T]] = []
    current: list[T] = []
    current_weight = 0
    for item in reversed(items):
        w = weight(item)
        if current and current_weight + w > target:
            bins.append(current)
            current, current_weight = [], 0
        current.append(item)
        current_weight += w
    if current:
        bins.append(current)
    return [list(reversed(b)) for b in reversed(bins)]


def merge_plan(
    manifests: Sequence[Mapping[str, Any]], settings: MergeSettings
) -> list[list[Mapping[str, Any]]]:
    """The manifests (``manifest_file`` rows) in output order, as bins: a bin of one is kept as
    is, a longer bin is to be merged into one manifest."""
    if not settings.enabled or not manifests:
        return [[m] for m in manifests]
    first = manifests[0]
    groups: dict[int, list[Mapping[str, Any]]] = {}
    for m in manifests:
        groups.setdefault(m["partition_spec_id"], []).append(m)
    out: list[list[Mapping[str, Any]]] = []
    for spec_id in sorted(groups, reverse=True):
        for b in pack_end(
            groups[spec_id], lambda m: m["manifest_length"], settings.target_size_bytes
        ):
            if len(b) > 1 and any(m is first for m in b) and len(b) < settings.min_count_to_merge:
                out.extend([m] for m in b)
            else:
                out.append(b)
    return out
