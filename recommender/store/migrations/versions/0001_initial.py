"""Initial schema: API keys, probe profiles, recommendations.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from recommender.store.models import UtcDateTime

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

document = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "api_keys",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("prefix", sa.String(32), nullable=False),
        sa.Column("key_sha256", sa.String(64), nullable=False),
        sa.Column("admin", sa.Boolean(), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("revoked_at", UtcDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_api_keys"),
        sa.UniqueConstraint("prefix", name="uq_api_keys_prefix"),
    )
    op.create_table(
        "profiles",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("received_at", UtcDateTime(), nullable=False),
        sa.Column("measured_at", UtcDateTime(), nullable=False),
        sa.Column("hostname", sa.String(255), nullable=False),
        sa.Column("cloud", sa.String(16), nullable=True),
        sa.Column("instance_type", sa.String(100), nullable=True),
        sa.Column("accelerator", sa.String(100), nullable=True),
        sa.Column("workload_name", sa.String(200), nullable=True),
        sa.Column("bound", sa.String(32), nullable=True),
        sa.Column("api_key_id", sa.Integer(), nullable=True),
        sa.Column("document", document, nullable=False),
        sa.ForeignKeyConstraint(
            ["api_key_id"], ["api_keys.id"], name="fk_profiles_api_key_id_api_keys"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_profiles"),
    )
    for column in ("received_at", "hostname", "instance_type", "accelerator", "workload_name"):
        op.create_index(f"ix_profiles_{column}", "profiles", [column])
    op.create_table(
        "recommendations",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("workload_name", sa.String(200), nullable=False),
        sa.Column("objective", sa.String(16), nullable=False),
        sa.Column("profile_id", sa.Uuid(), nullable=True),
        sa.Column("request", document, nullable=False),
        sa.Column("result", document, nullable=False),
        sa.ForeignKeyConstraint(
            ["profile_id"],
            ["profiles.id"],
            name="fk_recommendations_profile_id_profiles",
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_recommendations"),
    )
    op.create_index("ix_recommendations_created_at", "recommendations", ["created_at"])


def downgrade() -> None:
    op.drop_table("recommendations")
    op.drop_table("profiles")
    op.drop_table("api_keys")
