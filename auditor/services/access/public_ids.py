"""Opaque ids: what a project key sees instead of global row ids.

Snapshot, silence, session, evaluation, notification and label ids come from sequences
shared by every project, so their values and gaps told a tenant how busy the others are.
The API shows each as a keyed pseudo-random permutation of the global id instead: a 4-round
Feistel network over 48 bits whose round function is keyed BLAKE2b under the deployment's
secret (``instance_secrets``), tweaked with the kind of id and the project. So:

- an opaque id says nothing about the sequence (consecutive rows get unrelated numbers);
- the same row always has the same opaque id (links and bookmarks stay valid), and the
  permutation is reversible, so no lookup table is needed and no write path changes;
- another project's opaque id decodes, in this project, to some unrelated row id that the
  project-scoped lookup does not find (404, as before);
- the values stay JSON-safe integers below 2**48, so the API's types do not change.

Why not per-project sequence numbers: they need a new column and a counter on every insert
path (labels above all, where bulk COPY ingest would have to number rows), across modules
that other work changes; the permutation touches the read side only.
"""

from __future__ import annotations

import hashlib
import secrets

from auditor.storage.unit_of_work import UnitOfWork

BITS = 48
LIMIT = 1 << BITS  # opaque ids are in [0, LIMIT)
_HALF = BITS // 2
_MASK = (1 << _HALF) - 1
_ROUNDS = 4
SECRET_NAME = "public_ids"


class PublicIds:
    def __init__(self, key: bytes) -> None:
        # Keyed BLAKE2b is a PRF (as HMAC is) and several times faster per call; a history
        # answer encodes up to thousands of ids. BLAKE2b keys are at most 64 bytes.
        self._key = hashlib.sha256(key).digest()

    def _f(self, tweak: bytes, round_: int, half: int) -> int:
        message = tweak + bytes([round_]) + half.to_bytes(3, "big")
        digest = hashlib.blake2b(message, digest_size=3, key=self._key).digest()
        return int.from_bytes(digest, "big")

    def encode(self, kind: str, project_id: int, value: int) -> int:
        """The opaque id of global id ``value`` (of ``kind``) in project ``project_id``."""
        if not 0 <= value < LIMIT:
            raise ValueError(f"{kind} id {value} is outside the opaque range")
        tweak = f"{kind}:{project_id}:".encode()
        left, right = value >> _HALF, value & _MASK
        for round_ in range(_ROUNDS):
            left, right = right, left ^ self._f(tweak, round_, right)
        return (left << _HALF) | right

    def decode(self, kind: str, project_id: int, token: int) -> int | None:
        """The global id behind ``token``; None when no opaque id has that value."""
        if not 0 <= token < LIMIT:
            return None
        tweak = f"{kind}:{project_id}:".encode()
        left, right = token >> _HALF, token & _MASK
        for round_ in reversed(range(_ROUNDS)):
            left, right = right ^ self._f(tweak, round_, left), left
        return (left << _HALF) | right

    def maybe(self, kind: str, project_id: int, value: int | None) -> int | None:
        return None if value is None else self.encode(kind, project_id, value)


def public_ids_in(uow: UnitOfWork) -> PublicIds:
    """The permutation, read in the caller's open unit of work (the secret is made there, and
    committed with the caller's work, if missing)."""
    found = uow.secrets.get_secret(SECRET_NAME)
    if found is None:
        found = secrets.token_hex(32)
        uow.secrets.add_secret(SECRET_NAME, found)
    return PublicIds(bytes.fromhex(found))


def load_public_ids(uow: UnitOfWork) -> PublicIds:
    """The deployment's permutation (its secret is made on first use if missing)."""
    with uow:
        found = public_ids_in(uow)
        uow.commit()
    return found
