"""PostgreSQL file imports through a staging table: binary COPY in, set-based SQL out.

The rows of a file (already validated row by row, see ``auditor.ingestion.batch``) are
copied into a temporary table; then a few statements resolve raters, items and sessions
(creating those seen for the first time), judge repeats against the file itself and against
stored labels, and insert the labels, all inside the caller's transaction. Nothing goes back
and forth per batch: the server does joins it is good at, once per file.

Repeats (the rules of the import format): a row with a client key repeating a key, earlier
in the file or stored, with the same content is a duplicate, with other content a conflict;
a row without a key that gives labeled_at is identified by (item, rater, session,
labeled_at) the same way. Repeats inside one batch were already judged in Python.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session as OrmSession

from auditor.storage.repositories import WriteConflict, _is_write_conflict

STAGING_TYPES = ["int8", "text", "text", "text", "int4", "int8", "text", "text"]


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
_NO_SESSION = "CROSS JOIN (SELECT NULL::int8 AS id) s"  # no row gives a session


class PostgresStaging:
    def __init__(self, session: OrmSession) -> None:
        self.session = session
        self.connection = session.connection()
        self.connection.exec_driver_sql(
            "CREATE TEMP TABLE import_staging (row int8, item text, rater text, "
            "session text, category_id int4, labeled_at int8, rater_kind text, "
            "client_key text) ON COMMIT DROP"
        )
        # What the staged rows use, so that the pass skips the statements with nothing to do.
        self.sessions = self.kinds = self.keys = self.identified = False

    def copy(self, rows: list[tuple[Any, ...]]) -> None:
        """Binary COPY of (row, item, rater, session, category id, labeled_at, kind, key)."""
        if not rows:
            return
        _, _, _, sessions, _, times, kinds, keys = zip(*rows, strict=True)
        self.sessions = self.sessions or any(v is not None for v in sessions)
        self.kinds = self.kinds or any(v is not None for v in kinds)
        self.keys = self.keys or any(v is not None for v in keys)
        self.identified = self.identified or any(
            at is not None and key is None for at, key in zip(times, keys, strict=True)
        )
        driver = self.connection.connection.driver_connection
        assert driver is not None, "an open Connection has its driver connection"
        cursor = driver.cursor()
        with cursor, cursor.copy("COPY import_staging FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(STAGING_TYPES)
            for row in rows:
                copy.write_row(row)

    def _run(self, sql: str, **params: Any) -> Any:
        return self.connection.execute(text(sql), params)

    def finish(self, project_id: int, received: int, import_id: int) -> StagedResult:
        try:
            return self._finish(project_id, received, import_id)
        except Exception as error:  # a concurrent writer took a key or a lock first
            if _is_write_conflict(getattr(error, "orig", error)):
                raise WriteConflict(str(error)) from error
            raise

    def _finish(self, project_id: int, received: int, import_id: int) -> StagedResult:
        p = {"p": project_id}
        # Sorts and hashes of a million rows stay in memory (the default 4 MB spills to disk).
        self._run("SET LOCAL work_mem = '128MB'")
        self._run("ANALYZE import_staging")
        self._run(
            "INSERT INTO raters (project_id, external_id, kind) "
            "SELECT :p, rater, COALESCE(max(rater_kind), 'human') FROM import_staging "
            "GROUP BY rater ORDER BY rater ON CONFLICT DO NOTHING",
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
                    f"SELECT st.row, st.rater, st.rater_kind, r.kind {kind_rows} "
                    "ORDER BY st.row LIMIT 100",
                    **p,
                ).all()
                return StagedResult(0, 0, [tuple(r) for r in found], kind_count, [], 0)
        self._run(
            "INSERT INTO items (project_id, external_id) "
            "SELECT :p, item FROM (SELECT DISTINCT item FROM import_staging) d "
            "ORDER BY item ON CONFLICT DO NOTHING",
            **p,
        )
        if self.sessions:
            self._sessions(project_id, received)
        # Fresh statistics: a project's first import multiplies its items, and a plan made
        # for 10 items (nested loops) is slow for 100k.
        self._run("ANALYZE items, raters" + (", sessions" if self.sessions else ""))
        self.resolved = _RESOLVED + (_SESSION if self.sessions else _NO_SESSION)
        self._run(
            "CREATE TEMP TABLE import_repeat (row int8, first_row int8, import_id int8, "
            "by_key bool, same bool) ON COMMIT DROP"
        )
        self._judge_repeats(project_id, received)
        counts = self._run(
            "SELECT count(DISTINCT row), count(DISTINCT row) FILTER (WHERE NOT same) "
            "FROM import_repeat"
        ).one()
        repeated, conflict_count = int(counts[0]), int(counts[1])
        if conflict_count:
            found = self._run(
                "SELECT DISTINCT ON (row) row, first_row, import_id, by_key FROM import_repeat "
                "WHERE NOT same ORDER BY row, first_row NULLS LAST LIMIT 100"
            ).all()
            conflicts = [Repeat(int(r[0]), r[1], r[2], bool(r[3])) for r in found]
            return StagedResult(0, 0, [], 0, conflicts, conflict_count)
        skip = "WHERE NOT EXISTS (SELECT 1 FROM import_repeat d WHERE d.row = st.row) "
        inserted = self._run(
            "INSERT INTO labels (project_id, item_id, rater_id, session_id, category_id, "
            "labeled_at, received_at, client_key, import_id) "
            "SELECT :p, i.id, r.id, s.id, st.category_id, COALESCE(st.labeled_at, :recv), "
            f":recv, st.client_key, :imp {self.resolved} {skip if repeated else ''}"
            "ORDER BY st.row",
            recv=received,
            imp=import_id,
            **p,
        ).rowcount
        return StagedResult(int(inserted), repeated, [], 0, [], 0)

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
            "ORDER BY rater_id, session ON CONFLICT DO NOTHING",
            recv=received,
            p=project_id,
        )
        # Sessions that existed before widen to cover the new labels.
        self._run(
            "UPDATE sessions s SET started_at = LEAST(s.started_at, a.lo), "
            f"ended_at = GREATEST(s.ended_at, a.hi) FROM ({spans}) a "
            "WHERE s.project_id = :p AND s.rater_id = a.rater_id AND s.external_id = a.session "
            "AND (s.started_at > a.lo OR s.ended_at < a.hi)",
            recv=received,
            p=project_id,
        )

    def _judge_repeats(self, project_id: int, received: int) -> None:
        """Fill import_repeat (row, first_row, import_id, by_key, same): every staged row
        that repeats an earlier staged row or a stored label, and whether it is the same.
        Inside the file, repeats are found by a hash aggregate on the staged text (equal
        text, equal ids) and only repeated groups are ordered."""
        if self.identified:
            identity = "st.item, st.rater, st.session, st.labeled_at"
            self._run(
                "INSERT INTO import_repeat (row, first_row, by_key, same) "
                "SELECT row, first_row, false, same FROM ("
                "SELECT st.row, first_value(st.row) OVER w AS first_row, "
                "st.category_id = first_value(st.category_id) OVER w AS same "
                "FROM import_staging st JOIN ("
                f"SELECT {identity} FROM import_staging st "
                "WHERE st.labeled_at IS NOT NULL AND st.client_key IS NULL "
                f"GROUP BY {identity} HAVING count(*) > 1) g "
                "ON g.item = st.item AND g.rater = st.rater "
                "AND g.session IS NOT DISTINCT FROM st.session AND g.labeled_at = st.labeled_at "
                "WHERE st.client_key IS NULL "
                f"WINDOW w AS (PARTITION BY {identity} ORDER BY st.row)"
                ") t WHERE row <> first_row"
            )
        if self.keys:
            self._run(
                "INSERT INTO import_repeat (row, first_row, by_key, same) "
                "SELECT row, first_row, true, same FROM ("
                "SELECT row, first_value(row) OVER w AS first_row, "
                "item = first_value(item) OVER w AND rater = first_value(rater) OVER w "
                "AND category_id = first_value(category_id) OVER w "
                "AND session IS NOT DISTINCT FROM first_value(session) OVER w "
                "AND (labeled_at IS NULL OR first_value(labeled_at) OVER w IS NULL "
                "OR labeled_at = first_value(labeled_at) OVER w) AS same "
                "FROM import_staging WHERE client_key IS NOT NULL "
                "WINDOW w AS (PARTITION BY client_key ORDER BY row)"
                ") t WHERE row <> first_row"
            )
        stored = self._run(
            "SELECT EXISTS (SELECT 1 FROM labels WHERE project_id = :p)", p=project_id
        ).scalar_one()
        if not stored:
            return  # a first import: nothing stored to repeat
        if self.identified:
            self._run(
                "INSERT INTO import_repeat (row, import_id, by_key, same) "
                "SELECT st.row, max(l.import_id), false, bool_and(l.category_id = st.category_id) "
                f"{self.resolved} JOIN labels l ON l.project_id = :p "
                "AND l.item_id = i.id AND l.rater_id = r.id AND l.labeled_at = st.labeled_at "
                "AND l.session_id IS NOT DISTINCT FROM s.id "
                "WHERE st.labeled_at IS NOT NULL AND st.client_key IS NULL GROUP BY st.row",
                p=project_id,
            )
        if self.keys:
            self._run(
                "INSERT INTO import_repeat (row, import_id, by_key, same) "
                "SELECT st.row, l.import_id, true, l.item_id = i.id "
                "AND l.rater_id = r.id AND l.category_id = st.category_id "
                "AND l.session_id IS NOT DISTINCT FROM s.id "
                "AND (st.labeled_at IS NULL OR l.labeled_at = st.labeled_at) "
                f"{self.resolved} JOIN labels l ON l.project_id = :p "
                "AND l.client_key = st.client_key",
                p=project_id,
            )
