"""Bounded storage: recommendations know their API key (per-key quota), idempotency keys.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from recommender.store.models import UtcDateTime

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

document = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("recommendations") as batch:
        batch.add_column(sa.Column("api_key_id", sa.Integer(), nullable=True))
        batch.create_foreign_key(
            "fk_recommendations_api_key_id_api_keys", "api_keys", ["api_key_id"], ["id"]
        )
        batch.create_index("ix_recommendations_api_key_id_created_at", ["api_key_id", "created_at"])
    op.create_table(
        "idempotency_keys",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("scope", sa.String(80), nullable=False),
        sa.Column("key", sa.String(255), nullable=False),
        sa.Column("request_sha256", sa.String(64), nullable=False),
        sa.Column("status", sa.Integer(), nullable=False),
        sa.Column("location", sa.String(200), nullable=True),
        sa.Column("response", document, nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_idempotency_keys"),
        sa.UniqueConstraint("scope", "key", name="uq_idempotency_keys_scope"),
    )
    op.create_index("ix_idempotency_keys_created_at", "idempotency_keys", ["created_at"])


def downgrade() -> None:
    op.drop_table("idempotency_keys")
    with op.batch_alter_table("recommendations") as batch:
        batch.drop_index("ix_recommendations_api_key_id_created_at")
        batch.drop_constraint("fk_recommendations_api_key_id_api_keys", type_="foreignkey")
        batch.drop_column("api_key_id")
