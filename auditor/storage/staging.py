"""File imports through a staging table: rows in first, set-based SQL out, on PostgreSQL and
SQLite alike.

``Staging`` holds one connection with its temporary tables. The rows of a file (already
validated, see ``auditor.ingestion``) are copied into ``import_staging`` as they are read
(each batch's distinct item and rater names beside them, see ``staging_copy.NAME_TABLES``),
each batch in a short transaction of its own that touches only the temporary table: on
SQLite that takes no lock on the database (the temporary tables live in the connection's own
temp database), so API writes and recomputes go on while a file is parsed. Repeats inside
the file are judged there too (``judge_file``). Then the caller opens its write transaction
on the same connection (``bind``) and ``finish`` resolves raters, items and sessions
(creating those seen for the first time), judges repeats against stored labels and inserts
the labels, in a few statements: the write lock is held for the write only.

Repeats (the rules of the import format): a row with a client key repeating a key, earlier
in the file or stored, with the same content is a duplicate, with other content a conflict;
a row without a key that gives labeled_at is identified by (item, rater, session,
labeled_at) the same way. Repeats inside one batch were already judged in Python.

The SQL is one text for both databases (SQLite >= 3.39: ``IS NOT DISTINCT FROM``,
``UPDATE ... FROM``, window functions); the dialect-specific parts are the copy
(``staging_copy``) and, on SQLite, the reference trigger (see ``_insert_labels``).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

from sqlalchemy import text
from sqlalchemy.engine import Connection, Engine

from auditor.errors import WriteConflict
from auditor.storage.repositories import is_write_conflict
from auditor.storage.staging_copy import COLUMNS, NAME_TABLES, StagedColumns, copy_rows


@dataclass(frozen=True)
class Repeat:
    """A row that repeats an earlier row (``first_row``) or a stored label (``import_id``)
    with other content; ``by_key`` tells whether the key or the natural identity matched."""

    row: int
    first_row: int | None
    import_id: int | None
    by_key: bool


@dataclass(frozen=True)
class StagedResult:
    inserted: int
    duplicates: int
    kind_errors: list[tuple[int, str, str, str]]  # row, rater, given kind, stored kind
    kind_error_count: int
    conflicts: list[Repeat]
    conflict_count: int


# The staged rows with their ids: raters, items and sessions exist once this is run.
_RESOLVED = (
    "FROM import_staging st "
    "JOIN items i ON i.project_id = :p AND i.external_id = st.item "
    "JOIN raters r ON r.project_id = :p AND r.external_id = st.rater "
)
_SESSION = (
    "LEFT JOIN sessions s ON s.project_id = :p AND s.rater_id = r.id AND s.external_id = st.session"
)
_NO_SESSION = "CROSS JOIN (SELECT CAST(NULL AS BIGINT) AS id) s"  # no row gives a session
_INSERT_CHECK = "labels_check_insert"  # SQLite's per-row reference trigger (migration 0001)


class Staging:
    """``with Staging(engine) as staging: staging.copy(...); ...; finish`` (module docstring)."""

    def __init__(self, engine: Engine | Connection) -> None:
        self.connection: Connection = (
            engine if isinstance(engine, Engine) else engine.engine
        ).connect()
        self.dialect = self.connection.dialect.name
        self.connection.execution_options(sqlite_begin="DEFERRED")
        with self.connection.begin():
            # SQLite: seq is the rowid, so rows come out in file order without a sort.
            seq = "INTEGER PRIMARY KEY" if self.dialect == "sqlite" else "BIGINT"
            columns = ", ".join(
                f"{name} {seq if name == 'seq' else kind}" for name, kind in COLUMNS
            )
            self.connection.exec_driver_sql(f"CREATE TEMP TABLE import_staging ({columns})")
            self.connection.exec_driver_sql(
                "CREATE TEMP TABLE import_repeat (seq BIGINT, line BIGINT, first_line BIGINT, "
                "import_id BIGINT, by_key BOOLEAN, same BOOLEAN)"
            )
            self.connection.exec_driver_sql("CREATE INDEX import_repeat_seq ON import_repeat (seq)")
            for table, table_columns in NAME_TABLES.items():
                self.connection.exec_driver_sql(f"CREATE TEMP TABLE {table} ({table_columns})")
        self._next_seq = 0
        # What the staged rows use, so that the passes skip the statements with nothing to do.
        self.sessions = self.kinds = self.keys = self.identified = False
        self.resolved = ""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            if self.connection.in_transaction():
                self.connection.rollback()
            self.connection.execution_options(sqlite_begin="DEFERRED")
            with self.connection.begin():
                self.connection.exec_driver_sql("DROP TABLE IF EXISTS import_staging")
                for table in ["import_repeat", *NAME_TABLES]:
                    self.connection.exec_driver_sql(f"DROP TABLE IF EXISTS {table}")
        except Exception:
            # The temporary tables must not outlive the import on a pooled connection; and
            # a failure here must not hide the one that is propagating.
            self.connection.invalidate()
            if exc is None:
                raise
        finally:
            self.connection.close()

    def copy(self, columns: StagedColumns) -> None:
        """Stage rows (columns as in ``staging_copy.COLUMNS``) in a transaction of their own."""
        if not len(columns.line):
            return
        self.sessions = self.sessions or columns.session is not None
        self.kinds = self.kinds or columns.rater_kind is not None
        self.keys = self.keys or columns.client_key is not None
        self.identified = self.identified or columns.identified
        with self.connection.begin():
            copy_rows(self.connection, columns, self._next_seq)
        self._next_seq += len(columns.line)

    def bind(self) -> Connection:
        """The connection for the caller's write transaction (SQLite: BEGIN IMMEDIATE)."""
        return self.connection.execution_options(sqlite_begin="IMMEDIATE")

    def _run(self, sql: str, **params: Any) -> Any:
        return self.connection.execute(text(sql), params)

    def judge_file(self) -> None:
        """Fill import_repeat with the rows repeating an earlier row of the file (before the
        write transaction: this needs nothing stored). Repeats are found by a hash aggregate
        on the staged text (equal text, equal ids) and only repeated groups are ordered."""
        with self.connection.begin():
            if self.identified:
                identity = "st.item, st.rater, st.session, st.labeled_at"
                self._run(
                    "INSERT INTO import_repeat (seq, line, first_line, by_key, same) "
                    "SELECT seq, line, first_line, false, same FROM ("
                    "SELECT st.seq, st.line, first_value(st.seq) OVER w AS first_seq, "
                    "first_value(st.line) OVER w AS first_line, "
                    "st.category_id = first_value(st.category_id) OVER w AS same "
                    "FROM import_staging st JOIN ("
                    f"SELECT {identity} FROM import_staging st "
                    "WHERE st.labeled_at IS NOT NULL AND st.client_key IS NULL "
                    f"GROUP BY {identity} HAVING count(*) > 1) g "
                    "ON g.item = st.item AND g.rater = st.rater "
                    "AND g.session IS NOT DISTINCT FROM st.session "
                    "AND g.labeled_at = st.labeled_at "
                    "WHERE st.client_key IS NULL "
                    f"WINDOW w AS (PARTITION BY {identity} ORDER BY st.seq)"
                    ") t WHERE seq <> first_seq"
                )
            if self.keys:
                self._run(
                    "INSERT INTO import_repeat (seq, line, first_line, by_key, same) "
                    "SELECT seq, line, first_line, true, same FROM ("
                    "SELECT seq, line, first_value(seq) OVER w AS first_seq, "
                    "first_value(line) OVER w AS first_line, "
                    "item = first_value(item) OVER w AND rater = first_value(rater) OVER w "
                    "AND category_id = first_value(category_id) OVER w "
                    "AND session IS NOT DISTINCT FROM first_value(session) OVER w "
                    "AND (labeled_at IS NULL OR first_value(labeled_at) OVER w IS NULL "
                    "OR labeled_at = first_value(labeled_at) OVER w) AS same "
                    "FROM import_staging WHERE client_key IS NOT NULL "
                    "WINDOW w AS (PARTITION BY client_key ORDER BY seq)"
                    ") t WHERE seq <> first_seq"
                )

    def finish(self, project_id: int, received: int, import_id: int) -> StagedResult:
        """Resolve, judge against stored labels and insert, in the caller's transaction."""
        try:
            return self._finish(project_id, received, import_id)
        except Exception as error:  # a concurrent writer took a key or a lock first
            if is_write_conflict(getattr(error, "orig", error)):
                raise WriteConflict(str(error)) from error
            raise

    def _finish(self, project_id: int, received: int, import_id: int) -> StagedResult:
        p = {"p": project_id}
        if self.dialect == "postgresql":
            # Sorts and hashes of a million rows stay in memory (the default 4 MB spills).
            self._run("SET LOCAL work_mem = '128MB'")
            self._run("ANALYZE import_staging, import_items, import_raters")
        self._run(
            "INSERT INTO raters (project_id, external_id, kind) "
            "SELECT :p, rater, COALESCE(max(rater_kind), 'human') FROM import_raters "
            "WHERE true GROUP BY rater ORDER BY rater ON CONFLICT DO NOTHING",
            **p,
        )
        if self.kinds:
            kind_rows = (
                "FROM import_staging st JOIN raters r ON r.project_id = :p "
                "AND r.external_id = st.rater "
                "WHERE st.rater_kind IS NOT NULL AND st.rater_kind <> r.kind"
            )
            kind_count = int(self._run(f"SELECT count(*) {kind_rows}", **p).scalar_one())
            if kind_count:
                found = self._run(
                    f"SELECT st.line, st.rater, st.rater_kind, r.kind {kind_rows} "
                    "ORDER BY st.line LIMIT 100",
                    **p,
                ).all()
                return StagedResult(0, 0, [tuple(r) for r in found], kind_count, [], 0)
        self._run(
            "INSERT INTO items (project_id, external_id) "
            "SELECT :p, item FROM (SELECT DISTINCT item FROM import_items) d "
            # Stored items left out first (an anti-join: 2 s for 1M stored, against 6-9 s
            # for a conflict caught per row); ON CONFLICT stays for a concurrent import.
            "WHERE NOT EXISTS (SELECT 1 FROM items i WHERE i.project_id = :p "
            "AND i.external_id = d.item) ORDER BY item ON CONFLICT DO NOTHING",
            **p,
        )
        if self.sessions:
            self._sessions(project_id, received)
        if self.dialect == "postgresql":
            # Fresh statistics: a project's first import multiplies its items, and a plan
            # made for 10 items (nested loops) is slow for 100k.
            self._run("ANALYZE items, raters" + (", sessions" if self.sessions else ""))
        self.resolved = _RESOLVED + (_SESSION if self.sessions else _NO_SESSION)
        self._judge_stored(project_id)
        counts = self._run(
            "SELECT count(DISTINCT seq), count(DISTINCT CASE WHEN NOT same THEN seq END) "
            "FROM import_repeat"
        ).one()
        repeated, conflict_count = int(counts[0]), int(counts[1])
        if conflict_count:
            found = self._run(
                "SELECT min(line), min(first_line), max(import_id), "
                "max(CASE WHEN by_key THEN 1 ELSE 0 END) FROM import_repeat "
                "WHERE NOT same GROUP BY seq ORDER BY min(line), seq LIMIT 100"
            ).all()
            conflicts = [Repeat(int(r[0]), r[1], r[2], bool(r[3])) for r in found]
            return StagedResult(0, 0, [], 0, conflicts, conflict_count)
        inserted = self._insert_labels(project_id, received, import_id, bool(repeated))
        return StagedResult(inserted, repeated, [], 0, [], 0)

    def _insert_labels(self, project_id: int, received: int, import_id: int, skip: bool) -> int:
        """Insert the staged labels. Every reference is a join result of this transaction
        (items, raters, sessions of the project, categories checked by the caller), so on
        SQLite the per-row reference trigger (four lookups per label, most of the write's
        time) is dropped for this one statement and created again, from its stored text,
        before the transaction ends: other writers, which cannot write between the two (the
        write lock is ours), always find it in place.

        The rows go in file order (``ORDER BY st.seq``), so ids follow the file: readers
        break ties of labeled_at by id (``LabelArrays``, the repeats' first and later looks,
        a file without labeled_at whose labels share one time). Inserting in the identity
        index's order instead (item, rater, labeled_at, seq) would keep that order within an
        (item, rater) cell but not across cells, and saved 7% of this statement at 10M into
        10M (69 s against 75 s, within the noise of the shared machine): not taken."""
        trigger = None
        if self.dialect == "sqlite":
            trigger = self._run(
                "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = :name",
                name=_INSERT_CHECK,
            ).scalar()
            if trigger is not None:
                self.connection.exec_driver_sql(f"DROP TRIGGER {_INSERT_CHECK}")
        try:
            where = "WHERE NOT EXISTS (SELECT 1 FROM import_repeat d WHERE d.seq = st.seq) "
            return int(
                self._run(
                    "INSERT INTO labels (project_id, item_id, rater_id, session_id, "
                    "category_id, labeled_at, received_at, client_key, import_id) "
                    "SELECT :p, i.id, r.id, s.id, st.category_id, COALESCE(st.labeled_at, "
                    f":recv), :recv, st.client_key, :imp {self.resolved} {where if skip else ''}"
                    "ORDER BY st.seq",
                    p=project_id,
                    recv=received,
                    imp=import_id,
                ).rowcount
            )
        finally:
            if trigger is not None:
                self.connection.exec_driver_sql(trigger)

    def _sessions(self, project_id: int, received: int) -> None:
        spans = (
            "SELECT r.id AS rater_id, st.session, min(COALESCE(st.labeled_at, :recv)) AS lo, "
            "max(COALESCE(st.labeled_at, :recv)) AS hi FROM import_staging st "
            "JOIN raters r ON r.project_id = :p AND r.external_id = st.rater "
            "WHERE st.session IS NOT NULL GROUP BY r.id, st.session"
        )
        self._run(
            "INSERT INTO sessions (project_id, rater_id, external_id, started_at, ended_at) "
            f"SELECT :p, rater_id, session, lo, hi FROM ({spans}) a "
            "WHERE true ORDER BY rater_id, session ON CONFLICT DO NOTHING",
            recv=received,
            p=project_id,
        )
        # Sessions that existed before widen to cover the new labels.
        self._run(
            "UPDATE sessions AS s SET "
            "started_at = CASE WHEN a.lo < s.started_at THEN a.lo ELSE s.started_at END, "
            "ended_at = CASE WHEN a.hi > s.ended_at THEN a.hi ELSE s.ended_at END "
            f"FROM ({spans}) a "
            "WHERE s.project_id = :p AND s.rater_id = a.rater_id AND s.external_id = a.session "
            "AND (s.started_at > a.lo OR s.ended_at < a.hi)",
            recv=received,
            p=project_id,
        )

    def _judge_stored(self, project_id: int) -> None:
        """Add to import_repeat the staged rows that repeat a stored label."""
        # Only a staged time within the stored ones can repeat a stored label: two probes of
        # (project, labeled_at) (one subquery each: SQLite reads min and max from an index
        # only when alone) spare the identity index a probe per row of a file of newer labels
        # (10M into 10M: 15 s).
        bound = "SELECT {}(labeled_at) FROM labels WHERE project_id = :p"
        low, high = self._run(
            f"SELECT ({bound.format('min')}), ({bound.format('max')})", p=project_id
        ).one()
        if low is None:
            return  # a first import: nothing stored to repeat
        if self.identified:
            self._run(
                "INSERT INTO import_repeat (seq, line, import_id, by_key, same) "
                "SELECT st.seq, min(st.line), max(l.import_id), false, "
                "min(CASE WHEN l.category_id = st.category_id THEN 1 ELSE 0 END) = 1 "
                f"{self.resolved} JOIN labels l ON l.project_id = :p "
                "AND l.item_id = i.id AND l.rater_id = r.id AND l.labeled_at = st.labeled_at "
                "AND l.session_id IS NOT DISTINCT FROM s.id "
                "WHERE st.labeled_at BETWEEN :low AND :high AND st.client_key IS NULL "
                "GROUP BY st.seq",
                p=project_id,
                low=low,
                high=high,
            )
        if self.keys:
            self._run(
                "INSERT INTO import_repeat (seq, line, import_id, by_key, same) "
                "SELECT st.seq, st.line, l.import_id, true, l.item_id = i.id "
                "AND l.rater_id = r.id AND l.category_id = st.category_id "
                "AND l.session_id IS NOT DISTINCT FROM s.id "
                "AND (st.labeled_at IS NULL OR l.labeled_at = st.labeled_at) "
                f"{self.resolved} JOIN labels l ON l.project_id = :p "
                "AND l.client_key = st.client_key",
                p=project_id,
            )
