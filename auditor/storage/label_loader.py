"""Load one project's labels as columnar arrays, without an ORM object (or a tuple) per label.

PostgreSQL: ADBC -> Arrow -> NumPy. The ADBC PostgreSQL driver reads through binary ``COPY``,
so the load runs close to the server's own export speed.

SQLite: NOT through ADBC. The ADBC SQLite driver carries its own copy of the SQLite library;
two copies in one process break SQLite's POSIX locking (closing one copy's file descriptor
drops the other's locks; see "How To Corrupt An SQLite Database File", section 2.2.1), and in
practice its reads here missed rows committed through the other copy. Instead, one query per
chunk aggregates each column into a comma-separated text (``group_concat`` over the same rows
in the same pass, so the columns stay aligned) that NumPy parses in C: about 0.4 s for 1M
labels, against 1.3 s for fetchall + ``np.array``.

Database ids become dense indices with lookup arrays (no Python loop over labels): items and
raters are numbered in id order among those that have labels; a category's index is its
``position`` in the project's vocabulary. labeled_at is already BIGINT microseconds
(``auditor.storage.db.UtcMicros``), the unit of ``LabelArrays.order``.

The load runs on its own connection, outside the caller's transaction, so the watermark and the
count recorded with a snapshot are taken from the loaded rows themselves: they describe exactly
what was computed.

One snapshot for the whole read: raters, categories and labels are read as of the same moment,
or a label committed in between (with a rater or category new to the project) would refer to
reference rows the load did not see. On PostgreSQL the reference rows are read in a
REPEATABLE READ transaction that exports its snapshot (``pg_export_snapshot``), and the ADBC
connection imports it (``SET TRANSACTION SNAPSHOT``) before its ``COPY``: both connections see
exactly the same committed rows. On SQLite every read runs in one read transaction (WAL gives
it one snapshot from its first read).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sqlalchemy import select, text
from sqlalchemy.engine import Connection, Engine, Row

from auditor.domain import LabelArrays, RaterKind
from auditor.storage.models import Category, Rater

_COLUMNS = ("id", "item_id", "rater_id", "category_id", "labeled_at")


@dataclass(frozen=True)
class LoadedLabels:
    """The arrays and what they cover: the highest label id and the number of labels."""

    labels: LabelArrays
    watermark: int | None
    count: int


def postgres_adbc_uri(engine: Engine) -> str:
    """The libpq URI of ``engine``'s PostgreSQL database, for the ADBC driver."""
    return engine.url.set(drivername="postgresql").render_as_string(hide_password=False)


_SNAPSHOT_ID = re.compile(r"^[0-9A-Fa-f-]+$")


@dataclass(frozen=True)
class LabelRange:
    """Which labels of a project a load reads: labeled_at between two instants (epoch
    microseconds, ends inclusive, None for open) and ids up to a watermark. A rolling window
    read through ``ix_labels_project_id_labeled_at`` costs what the window holds, not what the
    project holds (issue 22)."""

    start_us: int | None = None
    end_us: int | None = None
    up_to_id: int | None = None

    def sql(self) -> str:
        """The extra WHERE terms (integers only, so they are safe as literals)."""
        terms = []
        if self.start_us is not None:
            terms.append(f" AND labeled_at >= {int(self.start_us)}")
        if self.end_us is not None:
            terms.append(f" AND labeled_at <= {int(self.end_us)}")
        if self.up_to_id is not None:
            terms.append(f" AND id <= {int(self.up_to_id)}")
        return "".join(terms)


EVERY_LABEL = LabelRange()


def fetch_columns_adbc(
    uri: str, project_id: int, snapshot: str | None = None, within: LabelRange = EVERY_LABEL
) -> dict[str, np.ndarray]:
    """The label columns of one project through ADBC PostgreSQL, as int64 arrays (unordered).

    ``snapshot``: an id from ``pg_export_snapshot()`` in a transaction that is still open; the
    read then sees exactly what that transaction sees."""
    import adbc_driver_postgresql.dbapi as driver

    query = (
        f"SELECT {', '.join(_COLUMNS)} FROM labels WHERE project_id = {int(project_id)}"
        f"{within.sql()}"
    )
    with driver.connect(uri, autocommit=True) as connection, connection.cursor() as cursor:
        if snapshot is not None:
            if not _SNAPSHOT_ID.match(snapshot):
                raise ValueError(f"not a PostgreSQL snapshot id: {snapshot!r}")
            cursor.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            cursor.execute(f"SET TRANSACTION SNAPSHOT '{snapshot}'")
        cursor.execute(query)
        table = cursor.fetch_arrow_table()
        if snapshot is not None:
            cursor.execute("COMMIT")
    if table.num_rows == 0:
        return {name: np.empty(0, dtype=np.int64) for name in _COLUMNS}
    return {name: table.column(name).to_numpy().astype(np.int64, copy=False) for name in _COLUMNS}


SQLITE_CHUNK = 2_000_000  # rows per query: keeps each text well under SQLite's 1 GB limit


def fetch_columns_sqlite(
    connection: Connection, project_id: int, within: LabelRange = EVERY_LABEL
) -> dict[str, np.ndarray]:
    """The label columns of one project from SQLite, parsed from ``group_concat`` texts."""
    concatenated = ", ".join(f"group_concat({name}, ',')" for name in _COLUMNS)
    query = (
        f"SELECT count(*), max(id), {concatenated} FROM ("
        f"SELECT {', '.join(_COLUMNS)} FROM labels WHERE project_id = ? AND id > ?"
        f"{within.sql()} ORDER BY id LIMIT ?)"
    )
    parts: dict[str, list[np.ndarray]] = {name: [] for name in _COLUMNS}
    after = -1
    while True:
        row = connection.exec_driver_sql(query, (int(project_id), after, SQLITE_CHUNK)).one()
        count = int(row[0])
        if count == 0:
            break
        for name, joined in zip(_COLUMNS, row[2:], strict=True):
            values = np.fromstring(joined, dtype=np.int64, sep=",")
            if values.shape[0] != count:
                raise ValueError(f"labels.{name}: parsed {values.shape[0]} values of {count}")
            parts[name].append(values)
        after = int(row[1])
        if count < SQLITE_CHUNK:
            break
    return {
        name: np.concatenate(chunks) if chunks else np.empty(0, dtype=np.int64)
        for name, chunks in parts.items()
    }


def fetch_columns_rows(connection: Connection, project_id: int) -> dict[str, np.ndarray]:
    """The same columns as DB-API tuples through ``fetchall`` and ``np.array`` (the benchmark's
    peer, and a fallback): one Python tuple per label."""
    marker = "?" if connection.dialect.paramstyle == "qmark" else "%s"
    query = f"SELECT {', '.join(_COLUMNS)} FROM labels WHERE project_id = {marker}"
    raw = connection.connection.dbapi_connection
    assert raw is not None, "an open Connection has its DB-API connection"
    cursor = raw.cursor()  # plain tuples, no Row objects
    try:
        cursor.execute(query, (int(project_id),))
        rows = cursor.fetchall()
    finally:
        cursor.close()
    matrix = np.array(rows, dtype=np.int64).reshape(len(rows), len(_COLUMNS))
    return {name: matrix[:, i] for i, name in enumerate(_COLUMNS)}


def dense_codes(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dense codes for database ids.

    Parameters
    ----------
    ids : int64 array, shape (n,)

    Returns
    -------
    codes : int64 array, shape (n,); ``uniques[codes] == ids``
    uniques : int64 array, shape (n_unique,), sorted
    """
    if ids.size == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    low = int(ids.min())
    span = int(ids.max()) - low + 1
    if span > 4 * ids.size + 4096:
        uniques, codes = np.unique(ids, return_inverse=True)
        return codes.astype(np.int64, copy=False), uniques
    # Ids of one project are nearly contiguous: a presence table beats sorting.
    offsets = ids - low
    present = np.zeros(span, dtype=bool)
    present[offsets] = True
    lookup = np.cumsum(present, dtype=np.int64) - 1
    return lookup[offsets], np.flatnonzero(present).astype(np.int64) + low


def load_project_labels(
    engine: Engine, project_id: int, *, method: str = "auto", within: LabelRange = EVERY_LABEL
) -> LoadedLabels:
    """Every label of ``project_id`` (or those ``within`` a range) as ``LabelArrays`` in
    label-id order.

    ``method``: "auto" (ADBC on PostgreSQL, group_concat on SQLite), or "rows" (fetchall and
    ``np.array``; the benchmark's peer; every label only).
    """
    if method == "rows" and within != EVERY_LABEL:
        raise ValueError("the rows method reads every label; a range needs method='auto'")
    postgres = engine.dialect.name == "postgresql"
    snapshot: str | None = None
    if postgres:
        engine = engine.execution_options(isolation_level="REPEATABLE READ")
    else:
        # A read transaction (not the unit of work's BEGIN IMMEDIATE): the load must not
        # hold SQLite's write lock, or every writer waits for it.
        engine = engine.execution_options(sqlite_begin="DEFERRED")
    with engine.connect() as connection:
        if postgres and method != "rows":
            # Exported before any other read, so every read below shares this snapshot.
            snapshot = str(connection.execute(text("SELECT pg_export_snapshot()")).scalar_one())
        category_rows = connection.execute(
            select(Category.id, Category.position, Category.name)
            .where(Category.project_id == project_id)
            .order_by(Category.position)
        ).all()
        rater_rows = connection.execute(
            select(Rater.id, Rater.external_id, Rater.kind).where(Rater.project_id == project_id)
        ).all()
        if method == "rows":
            columns = fetch_columns_rows(connection, project_id)
        elif not postgres:
            columns = fetch_columns_sqlite(connection, project_id, within)
        else:
            # Inside the ``with``: the exporting transaction must stay open during the import.
            columns = fetch_columns_adbc(postgres_adbc_uri(engine), project_id, snapshot, within)
    return assemble(columns, category_rows, rater_rows)


def assemble(
    columns: dict[str, np.ndarray],
    category_rows: Sequence[Row[int, int, str]],
    rater_rows: Sequence[Row[int, str, str]],
) -> LoadedLabels:
    """Turn raw id columns into ``LabelArrays`` (vectorised).

    ``columns`` is emptied as it is consumed, so each raw id column is freed as soon as its
    dense codes exist (at 10M labels each column is 80 MB).
    """
    label_ids = columns["id"]
    if label_ids.size > 1 and not bool(np.all(label_ids[1:] > label_ids[:-1])):
        # Order by id here rather than in SQL: the scan stays sequential, and a stable sort of
        # nearly sorted ids is close to linear.
        permutation = np.argsort(label_ids, kind="stable")
        columns = {name: values[permutation] for name, values in columns.items()}
        label_ids = columns["id"]

    category_ids = np.array([row.id for row in category_rows], dtype=np.int64)
    category_positions = np.array([row.position for row in category_rows], dtype=np.int64)
    by_id = np.argsort(category_ids)
    raw_category = columns.pop("category_id")
    slot = np.searchsorted(category_ids[by_id], raw_category)
    if label_ids.size and (
        int(slot.max()) >= category_ids.size
        or not np.array_equal(category_ids[by_id][slot], raw_category)
    ):
        raise ValueError("a label refers to a category that is not in its project")
    del raw_category
    category = category_positions[by_id][slot] if label_ids.size else slot.astype(np.int64)
    del slot

    item, _ = dense_codes(columns.pop("item_id"))
    rater, rater_db_ids = dense_codes(columns.pop("rater_id"))
    raters = {row.id: row for row in rater_rows}
    missing = [int(r) for r in rater_db_ids if int(r) not in raters]
    if missing:
        raise ValueError(f"labels refer to raters {missing[:5]} that are not in the project")
    chosen = [raters[int(r)] for r in rater_db_ids]

    labels = LabelArrays(
        item=item,
        rater=rater,
        category=category,
        order=columns.pop("labeled_at"),
        rater_is_model=np.array([r.kind == RaterKind.MODEL.value for r in chosen], dtype=bool),
        category_names=tuple(row.name for row in category_rows),
        rater_names=tuple(r.external_id for r in chosen),
        label_ids=label_ids,
    )
    watermark = int(label_ids[-1]) if label_ids.size else None
    return LoadedLabels(labels=labels, watermark=watermark, count=int(label_ids.size))
