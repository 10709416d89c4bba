"""Tables of the kept statistics (issue 22): per project, the mergeable sums of
``auditor.stats.kept`` per group of items, and what they cover.

- ``kept_states``: one row per (project, scope): ``cumulative``, or a rolling window (``7d``)
  whose sums cover the labels with labeled_at in [start_us, end_us]; the label watermark
  (highest label id folded in), the number of labels folded in, the number of groups, and
  the signature of what the sums depend on beyond the labels (collapse policy, categories,
  rater numbering and kinds): a different signature, or a revert after ``updated_at``,
  means a rebuild.
- ``kept_groups``: one row per (project, scope, group): the group's sums as one NumPy ``.npz``
  payload (a few arrays of R x R x K floats; their layout is the stats module's business).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Integer, LargeBinary, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from auditor.storage.db import Base, BigId, UtcMicros


class KeptState(Base):
    __tablename__ = "kept_states"

    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    scope: Mapped[str] = mapped_column(String(16), primary_key=True)
    watermark: Mapped[int] = mapped_column(BigId)
    label_count: Mapped[int] = mapped_column(BigId)
    groups: Mapped[int] = mapped_column(Integer)
    signature: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(UtcMicros)
    start_us: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    end_us: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


class KeptGroup(Base):
    __tablename__ = "kept_groups"

    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    scope: Mapped[str] = mapped_column(String(16), primary_key=True)
    group_index: Mapped[int] = mapped_column(Integer, primary_key=True)
    payload: Mapped[bytes] = mapped_column(LargeBinary)
