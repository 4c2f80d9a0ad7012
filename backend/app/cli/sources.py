"""`workbench sources`: list, add, check and delete a project's databases, see their schema
and describe their tables and columns. A password is read from a prompt or standard input
(`--password-stdin`), never needed in the command line, where `ps` would show it."""

from __future__ import annotations

import sys
from typing import Annotated, Any
from urllib.parse import urlsplit

import typer

from app.cli import lookup
from app.cli.client import WorkbenchClient
from app.cli.config import connect
from app.cli.output import Failure, confirm, out, print_json, print_table, when

app = typer.Typer(help="List and manage the databases of a project (its data sources).")

AsJson = Annotated[bool, typer.Option("--json", help="Print JSON.")]
Yes = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]
InProject = Annotated[
    str | None,
    typer.Option("--project", "-p", help="Project id or name.", show_default="the default"),
]
SourceRef = Annotated[str, typer.Argument(help="Source id or name.")]


def _source(client: WorkbenchClient, project: str | None, ref: str) -> dict[str, Any]:
    chosen = lookup.project_or_default(client, project)
    return lookup.pick("source", ref, client.sources(chosen["id"]), "name")


def _say(source: dict[str, Any]) -> None:
    out.print(f"{source['name']} ({source['kind']}): {source['status']}. {source['status_detail']}")


@app.callback(invoke_without_command=True)
def sources(ctx: typer.Context, project: InProject = None, as_json: AsJson = False) -> None:
    """List and manage data sources (alone: list them)."""
    if ctx.invoked_subcommand is None:
        list_sources(project, as_json)


@app.command("list")
def list_sources(project: InProject = None, as_json: AsJson = False) -> None:
    """List the sources of a project."""
    with connect() as client:
        items = client.sources(lookup.project_or_default(client, project)["id"])
    if as_json:
        print_json(items)
        return
    if not items:
        out.print("No sources yet: `workbench sources add NAME URL` adds one.")
        return
    rows = [
        (
            s["id"],
            s["name"],
            s["display_url"],
            s["status"],
            s.get("access") or "",
            when(s.get("checked_at")),
        )
        for s in items
    ]
    print_table(
        ("ID", "NAME", "URL", "STATUS", "ACCESS", "CHECKED"),
        rows,
        wrap=("URL",),
        optional=("ACCESS", "CHECKED", "ID"),
    )


@app.command()
def add(
    name: Annotated[str, typer.Argument(help="What the agent calls it: sql(…, source=NAME).")],
    url: Annotated[
        str,
        typer.Argument(
            help="postgresql://USER@HOST:5432/DB, mysql://…, sqlite:////PATH or duckdb:////PATH "
            "(leave the password out: it is asked for)."
        ),
    ],
    description: Annotated[str | None, typer.Option(help="What the database holds.")] = None,
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="Read the password from standard input.")
    ] = False,
    no_password: Annotated[
        bool, typer.Option("--no-password", help="Connect without a password (or the URL's).")
    ] = False,
    project: InProject = None,
    as_json: AsJson = False,
) -> None:
    """Add a database to a project; it is checked at once."""
    fields: dict[str, Any] = {"name": name, "url": url}
    if description:
        fields["description"] = description
    parts = urlsplit(url)
    if password_stdin:
        fields["password"] = sys.stdin.readline().rstrip("\r\n")
    elif parts.username and parts.password is None and not no_password:
        fields["password"] = typer.prompt(
            f"Password of {parts.username}", hide_input=True, default="", show_default=False
        )
    with connect() as client:
        source = client.create_source(lookup.project_or_default(client, project)["id"], **fields)
    if as_json:
        print_json(source)
    else:
        _say(source)


@app.command()
def check(source: SourceRef, project: InProject = None, as_json: AsJson = False) -> None:
    """Connect to a source now and list its tables; says why not when it cannot."""
    with connect() as client:
        result = client.check_source(_source(client, project, source)["id"])
    if as_json:
        print_json(result)
        return
    out.print(result["detail"])
    if not result["ok"]:
        raise Failure("The check failed.", exit_code=1)


def _said(described: dict[str, Any]) -> str:
    """A description, marked where it is the database's own comment, not the team's."""
    mark = " (DB comment)" if described.get("description_source") == "database" else ""
    return f"{described['description']}{mark}"


@app.command()
def schema(source: SourceRef, project: InProject = None, as_json: AsJson = False) -> None:
    """Show a source's tables and columns, with row estimates and descriptions."""
    with connect() as client:
        found = client.source_schema(_source(client, project, source)["id"])
    if as_json:
        print_json(found)
        return
    for table in found["tables"]:
        estimate = table["row_estimate"]
        rows = ", rows unknown" if estimate is None else f", ~{estimate:,} rows"
        about = f": {_said(table)}" if table["description"] else ""
        out.print(f"{table['schema']}.{table['name']}{rows}{about}", highlight=False)
        for column in table["columns"]:
            said = f"  {_said(column)}" if column["description"] else ""
            null = "" if column["nullable"] else " not null"
            out.print(f"    {column['name']} {column['type']}{null}{said}", highlight=False)
    if found["truncated"]:
        out.print("(The schema is larger than the workbench keeps; this is part of it.)")


@app.command()
def sample(
    source: SourceRef,
    table: Annotated[str, typer.Argument(help="Table name (schema.table when ambiguous).")],
    rows: Annotated[
        int, typer.Option("--rows", "-n", min=1, max=50, help="How many rows (at most 50).")
    ] = 20,
    project: InProject = None,
    as_json: AsJson = False,
) -> None:
    """Print a table's first rows (read-only, as the agent's queries read it)."""
    schema_name, _, name = table.rpartition(".")
    with connect() as client:
        found = client.source_sample(
            _source(client, project, source)["id"], name, schema_name or None, rows
        )
    if as_json:
        print_json(found)
        return
    columns = [c["name"] for c in found["columns"]]
    if not found["rows"]:
        out.print(f"{found['schema']}.{found['table']} has no rows.", highlight=False)
        return
    print_table(
        tuple(columns),
        [tuple("" if v is None else str(v) for v in row) for row in found["rows"]],
        wrap=tuple(columns),
    )


@app.command()
def describe(
    source: SourceRef,
    table: Annotated[str, typer.Argument(help="Table name (schema.table when ambiguous).")],
    text: Annotated[str, typer.Argument(help="The description (empty: remove it).")],
    column: Annotated[
        str | None, typer.Option("--column", "-c", help="Describe this column.")
    ] = None,
    project: InProject = None,
) -> None:
    """Describe a table or one of its columns (the team's data dictionary)."""
    schema_name, _, name = table.rpartition(".")
    entry: dict[str, Any] = {"name": name, **({"schema": schema_name} if schema_name else {})}
    if column:
        entry["columns"] = [{"name": column, "description": text}]
    else:
        entry["description"] = text
    with connect() as client:
        client.describe_source(_source(client, project, source)["id"], [entry])
    out.print(f"Described {table}{'.' + column if column else ''}.")


@app.command()
def delete(source: SourceRef, project: InProject = None, yes: Yes = False) -> None:
    """Delete a source (the database itself is not touched)."""
    with connect() as client:
        chosen = _source(client, project, source)
        if not yes:
            confirm(f"Delete the source {chosen['name']}?")
        client.delete_source(chosen["id"])
    out.print(f"Deleted the source {chosen['name']}.")
