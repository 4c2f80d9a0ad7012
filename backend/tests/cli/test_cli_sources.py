"""`workbench sources` as a user runs it: a database added with its password on standard
input (never in the command line), listed with the password masked, checked, its schema
shown and described (the database's own comments marked), then deleted."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.cli.test_cli import Cli, cli  # noqa: F401  (the fixture)
from tests.support.source_databases import ServerSource, mariadb_source

pytestmark = pytest.mark.parametrize("server", ["embedded"], indirect=True)


def test_a_database_is_added_checked_described_and_deleted(
    cli: Cli,  # noqa: F811
    mysql_source: ServerSource,
) -> None:
    url = f"mysql://{mysql_source.writer}@127.0.0.1:3306/{mysql_source.database}"
    added = cli.run(
        "sources", "add", "shop", url, "--password-stdin", stdin=mysql_source.password + "\n"
    )
    assert added.code == 0, added.stderr
    assert "shop (mysql): ready" in added.stdout and "read-only transaction" in added.stdout

    listed = cli.run("sources", "list")
    assert listed.code == 0 and "shop" in listed.stdout and "ready" in listed.stdout
    assert f"{mysql_source.writer}:***@" in listed.stdout
    assert mysql_source.password not in listed.stdout + cli.run("sources", "--json").stdout

    checked = cli.run("sources", "check", "shop")
    assert checked.code == 0 and "1 table" in checked.stdout

    described = cli.run("sources", "describe", "shop", "orders", "In euros", "--column", "amount")
    assert described.code == 0, described.stderr
    schema = cli.run("sources", "schema", "shop")
    assert "orders, ~100 rows" in schema.stdout
    assert "amount decimal(10,2)  In euros" in schema.stdout

    wrong = cli.run("sources", "add", "bad", url, "--password-stdin", stdin="not-it\n")
    assert wrong.code == 0 and "failed" in wrong.stdout and "refused the password" in wrong.stdout
    failed = cli.run("sources", "check", "bad")
    assert failed.code == 1 and "refused the password" in failed.stdout

    deleted = cli.run("sources", "delete", "shop", "--yes")
    assert deleted.code == 0 and "Deleted the source shop" in deleted.stdout
    assert "shop" not in cli.run("sources", "list").stdout


@pytest.fixture(scope="module")
def commented_mysql() -> Iterator[ServerSource]:
    """MariaDB with commented orders and a view (which keeps no row count)."""
    yield from mariadb_source(
        [
            "CREATE TABLE orders (id int PRIMARY KEY, amount decimal(10, 2) "
            "COMMENT 'Net amount in EUR') COMMENT 'One row per order'",
            "INSERT INTO orders VALUES (1, 10.5), (2, 21)",
            "CREATE VIEW big_orders AS SELECT * FROM orders WHERE amount > 20",
        ]
    )


def test_the_schema_marks_the_databases_comments_and_unknown_row_counts(
    cli: Cli,  # noqa: F811
    commented_mysql: ServerSource,
) -> None:
    url = f"mysql://{commented_mysql.writer}@127.0.0.1:3306/{commented_mysql.database}"
    stdin = commented_mysql.password + "\n"
    assert cli.run("sources", "add", "shop", url, "--password-stdin", stdin=stdin).code == 0
    schema = cli.run("sources", "schema", "shop")
    assert schema.code == 0, schema.stderr
    lines = schema.stdout.splitlines()
    assert f"{commented_mysql.database}.big_orders, rows unknown" in lines
    assert "One row per order (DB comment)" in schema.stdout
    assert "    amount decimal(10,2)  Net amount in EUR (DB comment)" in lines
    described = cli.run("sources", "describe", "shop", "orders", "Orders, tests excluded")
    assert described.code == 0, described.stderr
    schema = cli.run("sources", "schema", "shop").stdout
    assert ": Orders, tests excluded\n" in schema and "One row per order" not in schema
