#!/usr/bin/env python3
"""Seeds N cached blueprints into an svc SQLite database by copying one generated blueprint
(its compiled code and stored vector) under new ids and intents: what a cache of N blueprints
looks like to the start-up index build. Used by tests/load/cold_start.sh.

Usage: seed_blueprints.py DATABASE_FILE COUNT
"""
import sqlite3
import sys

COLUMNS = (
    "app_id, contract_hash, variant_key, contract, variance, source, code, code_hash, generator, "
    "model, created_at, name, description, category, fixture_props, embedding, embedding_model, "
    "featured, persona, aesthetic, is_operator_default, source_kind, updated_at"
)


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    path, count = sys.argv[1], int(sys.argv[2])
    db = sqlite3.connect(path)
    row = db.execute("SELECT blueprint_id FROM blueprints ORDER BY created_at LIMIT 1").fetchone()
    if row is None:
        sys.exit("seed: the database has no blueprint to copy (render one card first)")
    original = row[0]
    with db:
        db.execute(
            f"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) "
            f"INSERT INTO blueprints (blueprint_id, intent, {COLUMNS}) "
            f"SELECT blueprint_id || '-' || i, intent || ' ' || i, {COLUMNS} "
            f"FROM blueprints, n WHERE blueprint_id = ?",
            (count, original),
        )
    total = db.execute("SELECT count(*) FROM blueprints").fetchone()[0]
    print(f"seed: {total} blueprints in {path}")


if __name__ == "__main__":
    main()
