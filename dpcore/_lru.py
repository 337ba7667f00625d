"""A least-recently-used memo bounded by the bytes it holds, shared by threads (a server's visitors)."""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable, Hashable


class BytesLRU:
    """Keeps values under keys until their sizes add up to more than ``max_bytes`` (or ``max_items`` values), then
    forgets the least recently used. A value larger than the whole budget is not kept."""

    def __init__(self, max_bytes: float, max_items: int = 64) -> None:
        self.max_bytes, self.max_items = float(max_bytes), int(max_items)
        self._items: OrderedDict = OrderedDict()  # key -> (value, bytes)
        self._bytes = 0.0
        self._lock = threading.Lock()

    def get(self, key: Hashable, valid: Callable[[Any], bool] = lambda value: True) -> Any:
        """The value kept under ``key`` if ``valid(value)``, else None."""
        with self._lock:
            hit = self._items.get(key)
            if hit is None or not valid(hit[0]):
                return None
            self._items.move_to_end(key)
            return hit[0]

    def put(self, key: Hashable, value: Any, nbytes: float) -> None:
        if nbytes > self.max_bytes:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._items[key] = (value, float(nbytes))
            self._bytes += float(nbytes)
            while self._items and (self._bytes > self.max_bytes or len(self._items) > self.max_items):
                _, (_, size) = self._items.popitem(last=False)
                self._bytes -= size

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0.0

    def __len__(self) -> int:
        return len(self._items)

    def values(self) -> list:
        with self._lock:
            return [v for v, _ in self._items.values()]
