"""Reads and writes of the kept statistics (issue 22), and the indexed label reads their
updates need: the labels after a watermark, and every label of a few items. The caller owns
the transaction (``uow.kept``)."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from sqlalchemy import BigInteger, ColumnElement, delete, func, select, type_coerce
from sqlalchemy.orm import Session

from auditor.storage.kept_models import KeptGroup, KeptState
from auditor.storage.models import Category, Label, Rater

CUMULATIVE = "cumulative"  # the scope of the whole project's sums

LABEL_COLUMNS = ("id", "item_id", "rater_id", "category_id", "labeled_at")

# Item ids per IN list: well under SQLite's 32,766 bound parameters.
ITEMS_PER_QUERY = 5000


@dataclass(frozen=True)
class KeptRecord:
    """A project's kept state as stored: groups' payloads by group index."""

    watermark: int
    label_count: int
    groups: int
    signature: str
    updated_at: datetime
    payloads: dict[int, bytes]
    start_us: int | None = None  # a window's labeled_at range (None: cumulative)
    end_us: int | None = None


# A group's payload: this marker, the header's length (4 bytes, little endian), a JSON header
# of [name, shape, dtype] triples, then every array's values in that order. One frombuffer
# per array: reading 20 groups of 22 arrays through ``np.load`` of an .npz took ~0.12 s a
# state.
_PAYLOAD = b"KEPT3"


def to_payload(arrays: dict[str, np.ndarray]) -> bytes:
    values = {name: np.asarray(value, order="C") for name, value in arrays.items()}
    values = {
        name: value.astype(value.dtype.newbyteorder("<"), copy=False)
        for name, value in values.items()
    }
    header = json.dumps(
        [[name, list(value.shape), value.dtype.str] for name, value in values.items()]
    ).encode()
    parts = [_PAYLOAD, len(header).to_bytes(4, "little"), header]
    parts += [value.tobytes() for value in values.values()]
    return b"".join(parts)


def from_payload(payload: bytes) -> dict[str, np.ndarray]:
    if not payload.startswith(_PAYLOAD):  # an older state: its version rebuilds it
        with np.load(io.BytesIO(payload), allow_pickle=False) as stored:
            return {name: stored[name] for name in stored.files}
    start = len(_PAYLOAD) + 4
    length = int.from_bytes(payload[len(_PAYLOAD) : start], "little")
    offset = start + length
    arrays = {}
    for name, shape, kind in json.loads(payload[start:offset]):
        dtype = np.dtype(kind)
        count = int(np.prod(shape)) if shape else 1
        arrays[name] = np.frombuffer(payload, dtype=dtype, count=count, offset=offset).reshape(
            tuple(shape)
        )
        offset += dtype.itemsize * count
    return arrays


def _columns(rows: Sequence[tuple[int, ...]]) -> dict[str, np.ndarray]:
    matrix = np.array(rows, dtype=np.int64).reshape(len(rows), len(LABEL_COLUMNS))
    return {name: matrix[:, i] for i, name in enumerate(LABEL_COLUMNS)}


def _label_columns() -> list[ColumnElement[int]]:
    """The label columns as raw integers (labeled_at as stored: microseconds, not a
    ``datetime`` per row)."""
    return [type_coerce(getattr(Label, name), BigInteger()) for name in LABEL_COLUMNS]


class KeptRepository:
    def __init__(self, db: Session) -> None:
        self.db = db

    def load(self, project_id: int, scope: str = CUMULATIVE) -> KeptRecord | None:
        state = self.db.get(KeptState, (project_id, scope))
        if state is None:
            return None
        rows = self.db.execute(
            select(KeptGroup.group_index, KeptGroup.payload).where(
                KeptGroup.project_id == project_id, KeptGroup.scope == scope
            )
        ).all()
        return KeptRecord(
            int(state.watermark),
            int(state.label_count),
            int(state.groups),
            state.signature,
            state.updated_at,
            {int(g): bytes(p) for g, p in rows},
            state.start_us,
            state.end_us,
        )

    def save(
        self,
        project_id: int,
        *,
        watermark: int,
        label_count: int,
        groups: int,
        signature: str,
        at: datetime,
        payloads: dict[int, bytes],
        replace_all: bool = False,
        scope: str = CUMULATIVE,
        start_us: int | None = None,
        end_us: int | None = None,
    ) -> None:
        """Write the state row and the given groups' payloads (all groups with
        ``replace_all``, which drops every group not given)."""
        state = self.db.get(KeptState, (project_id, scope))
        if state is None:
            state = KeptState(project_id=project_id, scope=scope)
            self.db.add(state)
        state.watermark = watermark
        state.label_count = label_count
        state.groups = groups
        state.signature = signature
        state.updated_at = at
        state.start_us, state.end_us = start_us, end_us
        doomed = delete(KeptGroup).where(
            KeptGroup.project_id == project_id, KeptGroup.scope == scope
        )
        if not replace_all:
            doomed = doomed.where(KeptGroup.group_index.in_(list(payloads)))
        self.db.execute(doomed)
        self.db.add_all(
            KeptGroup(project_id=project_id, scope=scope, group_index=g, payload=p)
            for g, p in payloads.items()
        )
        self.db.flush()

    def scopes(self, project_id: int) -> list[str]:
        """The scopes the project keeps sums for."""
        return sorted(
            self.db.scalars(select(KeptState.scope).where(KeptState.project_id == project_id))
        )

    def drop_windows(self, project_id: int, keep: Sequence[str]) -> None:
        """Forget the kept states of windows the project no longer has."""
        for table in (KeptGroup, KeptState):
            self.db.execute(
                delete(table).where(
                    table.project_id == project_id,
                    table.scope != CUMULATIVE,
                    table.scope.not_in(list(keep)),
                )
            )

    def count_after(self, project_id: int, watermark: int) -> int:
        """How many labels have id > ``watermark`` (index ``ix_labels_project_id_id``)."""
        return int(
            self.db.scalar(
                select(func.count()).where(Label.project_id == project_id, Label.id > watermark)
            )
            or 0
        )

    def labels_after(
        self, project_id: int, watermark: int, upto: int | None = None
    ) -> dict[str, np.ndarray]:
        """The labels with id > ``watermark`` (and <= ``upto``; index
        ``ix_labels_project_id_id``)."""
        columns = _label_columns()
        query = select(*columns).where(Label.project_id == project_id, Label.id > watermark)
        if upto is not None:
            query = query.where(Label.id <= upto)
        return _columns([tuple(r) for r in self.db.execute(query).all()])

    def labels_labeled_between(
        self, project_id: int, start_us: int, end_us: int, upto: int
    ) -> dict[str, np.ndarray]:
        """The labels with start_us <= labeled_at < end_us and id <= ``upto`` (index
        ``ix_labels_project_id_labeled_at``): those a moving window lost or gained."""
        columns = _label_columns()
        at = type_coerce(Label.labeled_at, BigInteger())
        query = select(*columns).where(
            Label.project_id == project_id, at >= start_us, at < end_us, Label.id <= upto
        )
        return _columns([tuple(r) for r in self.db.execute(query).all()])

    def labels_of_items(
        self, project_id: int, item_ids: np.ndarray, upto: int
    ) -> dict[str, np.ndarray]:
        """Every label with id <= ``upto`` of the given items (index ``ix_labels_identity``)."""
        columns = _label_columns()
        rows: list[tuple[int, ...]] = []
        ids = [int(i) for i in item_ids]
        for low in range(0, len(ids), ITEMS_PER_QUERY):  # bounded IN lists
            rows.extend(
                tuple(r)
                for r in self.db.execute(
                    select(*columns).where(
                        Label.project_id == project_id,
                        Label.item_id.in_(ids[low : low + ITEMS_PER_QUERY]),
                        Label.id <= upto,
                    )
                ).all()
            )
        return _columns(rows)

    def raters(self, project_id: int) -> dict[int, str]:
        """{rater id: kind} of the project."""
        rows = self.db.execute(
            select(Rater.id, Rater.kind).where(Rater.project_id == project_id)
        ).all()
        return {int(i): str(k) for i, k in rows}

    def category_ids(self, project_id: int) -> list[int]:
        """The project's category ids in position order."""
        return [
            int(i)
            for i in self.db.scalars(
                select(Category.id)
                .where(Category.project_id == project_id)
                .order_by(Category.position)
            )
        ]

    def names(self, project_id: int) -> tuple[dict[int, str], dict[int, str]]:
        """({rater id: external id}, {category id: name}) of the project: what a snapshot
        computed from the kept state is labelled with."""
        raters = self.db.execute(
            select(Rater.id, Rater.external_id).where(Rater.project_id == project_id)
        ).all()
        categories = self.db.execute(
            select(Category.id, Category.name).where(Category.project_id == project_id)
        ).all()
        return {int(i): str(n) for i, n in raters}, {int(i): str(n) for i, n in categories}

    def last_labeled_at(self, project_id: int, upto: int) -> int | None:
        """The latest labeled_at (epoch microseconds) of the project's labels up to id
        ``upto`` (an empty window's reason names it)."""
        found = self.db.execute(
            select(func.max(type_coerce(Label.labeled_at, BigInteger()))).where(
                Label.project_id == project_id, Label.id <= upto
            )
        ).scalar()
        return None if found is None else int(found)
